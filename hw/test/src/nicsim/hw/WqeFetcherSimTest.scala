package nicsim.hw

import org.scalatest.funsuite.AnyFunSuite
import nicsim.adapter.{WqeFetcher => JFetcher}
import nicsim.adapter.stim.WqeStimulus
import nicsim.profile.Profiles

/**
 * WqeFetcher RTL against in-order scoreboards fed by its Java twin: WQEs posted into real rings
 * (some malformed), a DMA responder with random latency and failures, random back-pressure.
 */
class WqeFetcherSimTest extends AnyFunSuite {
  for (profile <- Seq("cx-gen3x16", "lanai72"))
    test(s"WqeFetcher RTL matches the Java twin's transactions in order ($profile)") {
      val cfg = JFetcher.Config.from(Profiles.load(profile))
      val out = TwinReplay.run(WqeFetcher(cfg), d => new JFetcher(d, cfg),
        t => new WqeStimulus(t.asInstanceOf[JFetcher], 8), 40000, 8, s"scoreboard_$profile")
      val n = out.transactions
      assert(n("io_wqe") > 2000 && n("io_dmaReq") > 500 && n("io_error") > 20, out)
    }
}
