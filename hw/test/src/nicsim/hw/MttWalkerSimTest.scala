package nicsim.hw

import org.scalatest.funsuite.AnyFunSuite
import nicsim.adapter.{MttWalker => JWalker}
import nicsim.adapter.stim.MttStimulus
import nicsim.profile.Profiles

/**
 * MttWalker RTL against in-order scoreboards fed by its Java twin: requests right or wrong in one
 * way each, mkey churn, MTT fills with random latency and rare faults. lanai43's two-entry
 * translation cache makes almost every page a miss; cx-gen3x16's mostly hits.
 */
class MttWalkerSimTest extends AnyFunSuite {
  for (profile <- Seq("lanai43", "cx-gen3x16"))
    test(s"MttWalker RTL matches the Java twin's transactions in order ($profile)") {
      val cfg = JWalker.Config.from(Profiles.load(profile))
      val out = TwinReplay.run(MttWalker(cfg), d => new JWalker(d, cfg),
        t => new MttStimulus(t.asInstanceOf[JWalker], 6), 30000, 6, s"scoreboard_$profile")
      assert(out.transactions("io_rsp") > 3000, out)
      if (profile == "lanai43") assert(out.transactions("io_fill") > 1000, out)
    }
}
