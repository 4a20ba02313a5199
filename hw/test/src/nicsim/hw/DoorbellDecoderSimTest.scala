package nicsim.hw

import scala.collection.mutable.ArrayBuffer
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._
import spinal.core.sim._
import spinal.lib.sim.{FlowMonitor, ScoreboardInOrder, StreamMonitor}
import nicsim.adapter.{DoorbellError, DoorbellMsg, MmioWrite, QueueTableWrite}
import nicsim.adapter.{DoorbellDecoder => JDecoder}
import nicsim.adapter.stim.DoorbellStimulus
import nicsim.profile.Profiles
import nicsim.sim.{Clocked, Simulator}

/**
 * DoorbellDecoder RTL against an in-order scoreboard: the seeded DoorbellStimulus (random
 * doorbells, every refusal, table churn, random back-pressure) drives the Java twin, whose
 * delivered doorbells and reported errors are the reference (pushRef); the same inputs, cycle for
 * cycle, are replayed into the RTL, whose outputs SpinalHDL's StreamMonitor and FlowMonitor push
 * as pushDut. (Cycle-exact lockstep of the same pair is the cosim module's LockstepTest.)
 */
class DoorbellDecoderSimTest extends AnyFunSuite {
  val cfg: JDecoder.Config = JDecoder.Config.from(Profiles.load("cx-gen3x16"))
  val cycles = 30000

  test("DoorbellDecoder RTL matches the Java twin's transactions in order under random back-pressure") {
    // 1. the reference: the Java twin under the stimulus, recording each cycle's inputs
    val jsim = new Simulator()
    val core = jsim.clockDomain("core", 4000)
    val twin = new JDecoder(core, cfg)
    core.add(new DoorbellStimulus(twin, 21))
    val mmio = ArrayBuffer[MmioWrite]()
    val table = ArrayBuffer[QueueTableWrite]()
    val ready = ArrayBuffer[Boolean]()
    val refDoorbells = ArrayBuffer[DoorbellMsg]()
    val refErrors = ArrayBuffer[DoorbellError]()
    core.add(new Clocked {
      override def drive(): Unit = ()
      override def update(): Unit = {
        mmio += (if (twin.mmio().valid()) twin.mmio().payload() else null)
        table += (if (twin.tableWrite().valid()) twin.tableWrite().payload() else null)
        ready += twin.doorbell().ready()
        if (twin.doorbell().fire()) refDoorbells += twin.doorbell().payload()
        if (twin.error().valid()) refErrors += twin.error().payload()
      }
    })
    for (c <- 0 until cycles) { core.wake(); jsim.runUntil(core.picosOfCycle(c)) }

    // 2. the RTL, replaying the same inputs, checked by scoreboards
    var doorbellMatches, errorMatches = 0L
    NicsimSim.config.compile(DoorbellDecoder(cfg)).doSim("scoreboard", 21) { dut =>
      // SpinalSim's scoreboards live inside a simulation
      val sbDoorbell = ScoreboardInOrder[DoorbellMsg]()
      val sbError = ScoreboardInOrder[DoorbellError]()
      refDoorbells.foreach(sbDoorbell.pushRef)
      refErrors.foreach(sbError.pushRef)
      dut.io.mmio.valid #= false
      dut.io.tableWrite.valid #= false
      dut.io.doorbell.ready #= false
      dut.clockDomain.forkStimulus(10)
      dut.clockDomain.waitSampling(5)
      StreamMonitor(dut.io.doorbell, dut.clockDomain)(p => sbDoorbell.pushDut(LayoutSim.read(p, DoorbellMsg.LAYOUT)))
      FlowMonitor(dut.io.error, dut.clockDomain)(p => sbError.pushDut(LayoutSim.read(p, DoorbellError.LAYOUT)))
      for (c <- 0 until cycles) {
        dut.io.mmio.valid #= mmio(c) != null
        if (mmio(c) != null) LayoutSim.write(dut.io.mmio.payload, MmioWrite.LAYOUT, mmio(c))
        dut.io.tableWrite.valid #= table(c) != null
        if (table(c) != null) LayoutSim.write(dut.io.tableWrite.payload, QueueTableWrite.LAYOUT, table(c))
        dut.io.doorbell.ready #= ready(c)
        dut.clockDomain.waitSampling()
      }
      dut.clockDomain.waitSampling(4)
      sbDoorbell.checkEmptyness()
      sbError.checkEmptyness()
      doorbellMatches = sbDoorbell.matches
      errorMatches = sbError.matches
    }
    assert(refDoorbells.size > 3000 && refErrors.size > 3000, s"${refDoorbells.size} doorbells, ${refErrors.size} errors: weak stimulus")
    assert(doorbellMatches == refDoorbells.size, s"RTL delivered $doorbellMatches of ${refDoorbells.size} doorbells")
    assert(errorMatches == refErrors.size, s"RTL reported $errorMatches of ${refErrors.size} errors")
  }
}
