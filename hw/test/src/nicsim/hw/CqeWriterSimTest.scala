package nicsim.hw

import org.scalatest.funsuite.AnyFunSuite
import nicsim.adapter.{CqeWriter => JWriter}
import nicsim.adapter.stim.CqeStimulus
import nicsim.profile.Profiles

/** CqeWriter RTL against in-order scoreboards fed by its Java twin: CQEs, arming, overflows, resets. */
class CqeWriterSimTest extends AnyFunSuite {
  test("CqeWriter RTL matches the Java twin's transactions in order") {
    val cfg = JWriter.Config.from(Profiles.load("cx-gen3x16"))
    val out = TwinReplay.run(CqeWriter(cfg), d => new JWriter(d, cfg), t => new CqeStimulus(t.asInstanceOf[JWriter], 5),
      30000, 5, "scoreboard")
    val n = out.transactions
    assert(n("io_write") > 5000 && n("io_event") > 200 && n("io_error") > 100, out)
  }
}
