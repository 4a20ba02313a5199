package nicsim.hw

import org.scalatest.funsuite.AnyFunSuite
import nicsim.adapter.{DoorbellDecoder => JDecoder}
import nicsim.adapter.stim.DoorbellStimulus
import nicsim.profile.Profiles

/**
 * DoorbellDecoder RTL against in-order scoreboards fed by its Java twin under the shared seeded
 * stimulus (random doorbells, every refusal, table churn, random back-pressure). Cycle-exact
 * lockstep of the same pair is the cosim module's LockstepTest.
 */
class DoorbellDecoderSimTest extends AnyFunSuite {
  test("DoorbellDecoder RTL matches the Java twin's transactions in order under random back-pressure") {
    val cfg = JDecoder.Config.from(Profiles.load("cx-gen3x16"))
    val out = TwinReplay.run(DoorbellDecoder(cfg), d => new JDecoder(d, cfg),
      t => new DoorbellStimulus(t.asInstanceOf[JDecoder], 21), 30000, 21, "scoreboard")
    assert(out.transactions("io_doorbell") > 3000 && out.transactions("io_error") > 3000, out)
  }
}
