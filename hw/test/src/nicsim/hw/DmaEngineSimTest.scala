package nicsim.hw

import org.scalatest.funsuite.AnyFunSuite
import nicsim.adapter.{DmaEngine => JDma}
import nicsim.adapter.stim.DmaStimulus
import nicsim.profile.Profiles

/**
 * DmaEngine RTL against in-order scoreboards fed by its Java twin, with all three engines
 * contending for the local bus, at the LANai 4.3's 32-bit data path and the modern 256-bit one.
 */
class DmaEngineSimTest extends AnyFunSuite {
  for (profile <- Seq("lanai43", "cx-gen3x16"))
    test(s"DmaEngine RTL matches the Java twin's transactions in order ($profile)") {
      val cfg = JDma.Config.from(Profiles.load(profile))
      val out = TwinReplay.run(DmaEngine(cfg), d => new JDma(d, cfg), t => new DmaStimulus(t.asInstanceOf[JDma], 9),
        30000, 9, s"scoreboard_$profile")
      val n = out.transactions
      assert(n("io_linkTx") > 3000 && n("io_pciWrite") > 1000 && n("io_recvDone") > 20, out)
    }
}
