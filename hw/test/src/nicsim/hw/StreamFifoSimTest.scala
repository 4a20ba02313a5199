package nicsim.hw

import java.nio.file.Files
import scala.util.Random
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._
import spinal.core.sim._
import nicsim.adapter.DoorbellMsg
import nicsim.sim.{ClockDomain => JClockDomain, Clocked, Simulator}
import nicsim.wave.{VcdReader, WaveFiles}

/**
 * The first RTL block under Verilator, checked against its Java twin (nicsim.sim.StreamFifo) in
 * lockstep: identical random stimulus with random back-pressure goes to both every cycle, and the
 * outputs (push.ready, pop.valid, pop.payload, occupancy) must agree on every edge.
 */
class StreamFifoSimTest extends AnyFunSuite {
  val depth = 8
  val cycles = 20000

  test("DoorbellFifo RTL and its Java twin agree on every cycle under random stimulus") {
    val compiled = NicsimSim.config.compile(StreamFifo(DoorbellMsg.LAYOUT, depth).setDefinitionName("DoorbellFifo"))
    var compared = 0L
    var transfers = 0L
    val modelVcd = NicsimSim.wave("DoorbellFifo", "lockstep").resolveSibling("model.vcd.gz")
    val modelTrace = nicsim.wave.VcdWriter.open(modelVcd, "1ps")
    compiled.doSim("lockstep", 42) { dut =>
      val rnd = new Random(42)
      // the Java twin, stepped one edge per RTL clock
      val jsim = new Simulator()
      val core: JClockDomain = jsim.clockDomain("core", 4000)
      val twin = new nicsim.sim.StreamFifo[DoorbellMsg]("DoorbellFifo", core, depth, DoorbellMsg.LAYOUT)
      twin.trace(modelTrace, "TOP.DoorbellFifo")
      var inValid = false
      var inPayload: DoorbellMsg = null
      var popReady = false
      core.add(new Clocked {
        override def drive(): Unit = {
          if (inValid) twin.push().push(inPayload) else twin.push().idle()
          twin.pop().ready(popReady)
        }
        override def update(): Unit = ()
        override def active(): Boolean = false
      })

      dut.io.push.valid #= false
      dut.io.pop.ready #= false
      dut.clockDomain.forkStimulus(10)
      dut.clockDomain.waitSampling(5) // leave reset
      sleep(1)

      var held = false // push valid is pending from the last edge: contract says hold it
      for (cycle <- 0 until cycles) {
        // new inputs for this cycle, the same for both twins
        if (!held) {
          inValid = rnd.nextInt(100) < 60
          inPayload = new DoorbellMsg(rnd.nextInt(1 << 24), rnd.nextInt(1 << 24), rnd.nextInt(4), rnd.nextInt(4),
            rnd.nextInt(2))
        }
        popReady = rnd.nextInt(100) < 45 // below the push rate: the FIFO fills and back-pressures
        dut.io.push.valid #= inValid
        LayoutSim.write(dut.io.push.payload, DoorbellMsg.LAYOUT, inPayload)
        dut.io.pop.ready #= popReady
        sleep(1) // let combinational outputs settle before the edge samples them

        val rtlPushReady = dut.io.push.ready.toBoolean
        val rtlPopValid = dut.io.pop.valid.toBoolean
        val rtlOccupancy = dut.io.occupancy.toInt
        val rtlPop = LayoutSim.read(dut.io.pop.payload, DoorbellMsg.LAYOUT)
        val javaOccupancy = twin.occupancy()

        core.wake()
        jsim.runUntil(core.picosOfCycle(cycle)) // the Java twin's edge number `cycle`
        def diverged(field: String, expected: Any, actual: Any): Nothing =
          fail(s"divergence at cycle $cycle (seed 42), port $field: Java twin $expected, RTL $actual")
        if (twin.push().ready() != rtlPushReady) diverged("io_push_ready", twin.push().ready(), rtlPushReady)
        if (twin.pop().valid() != rtlPopValid) diverged("io_pop_valid", twin.pop().valid(), rtlPopValid)
        if (rtlPopValid && twin.pop().payload() != rtlPop) diverged("io_pop_payload", twin.pop().payload(), rtlPop)
        if (javaOccupancy != rtlOccupancy) diverged("io_occupancy", javaOccupancy, rtlOccupancy)
        compared += 1
        if (inValid && rtlPushReady) transfers += 1
        held = inValid && !rtlPushReady

        dut.clockDomain.waitSampling()
        sleep(1)
      }
    }
    modelTrace.close()
    assert(compared == cycles)
    assert(transfers > cycles / 3, s"only $transfers transfers: stimulus too weak to mean anything")

    // the run left a waveform with the block's ports under their layout-derived names
    val vcd = NicsimSim.wave("DoorbellFifo", "lockstep")
    assert(Files.exists(vcd), s"no waveform at $vcd")
    val wave = VcdReader.read(vcd)
    val names = wave.signals().keySet()
    assert(names.contains("TOP.DoorbellFifo.io_pop_payload_index"), names.toString.take(500))
    assert(wave.signal("TOP.DoorbellFifo.io_pop_payload_qpn").changes().size() > transfers / 2)
    // the Java twin's trace carries the same port signals under the same names, to open side by side
    val model = VcdReader.read(modelVcd)
    val modelNames = model.signals().keySet()
    assert(modelNames.size() >= 10, modelNames)
    assert(names.containsAll(modelNames),
      s"model-only signals: ${modelNames.toString} vs RTL ${names.toString.take(400)}")
    assert(model.signal("TOP.DoorbellFifo.io_pop_payload_qpn").changes().size() > transfers / 2)
    // and it survives xz compression unchanged
    val xz = vcd.resolveSibling("wave.vcd.xz")
    val in = Files.newInputStream(vcd)
    val out = WaveFiles.openOutput(xz)
    try in.transferTo(out) finally { in.close(); out.close() }
    assert(nicsim.wave.WaveDiff.firstDifference(wave, VcdReader.read(xz)).isEmpty)
    assert(Files.size(xz) < Files.size(vcd) / 4)
  }
}
