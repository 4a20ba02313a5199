package nicsim.hw

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import spinal.core._
import spinal.core.sim._
import spinal.lib.sim.ScoreboardInOrder
import nicsim.sim.{Block, ClockDomain => JClockDomain, Clocked, Flow => JFlow, Port, PortWires, Simulator}
import nicsim.sim.{Stream => JStream}

/**
 * Checks an RTL block against its Java twin at the transaction level, for any block whose twin
 * lists its ports: the stimulus drives the twin; every cycle's input wires are recorded by RTL
 * name, and every transaction on an output port (a stream transfer, a flow pulse) becomes a
 * reference. The inputs are replayed into the RTL cycle for cycle, and each output port's
 * transfers are checked against the references by SpinalHDL's ScoreboardInOrder.
 */
object TwinReplay {
  final case class Outcome(transactions: Map[String, Long])

  def run(rtl: => Component, twinOf: JClockDomain => Block, stimulus: Block => Clocked, cycles: Int, seed: Int,
      testName: String): Outcome = {
    // 1. the Java side, recording
    val jsim = new Simulator()
    val core = jsim.clockDomain("core", 4000)
    val twin = twinOf(core)
    core.add(stimulus(twin))
    // every wire the RTL receives, by its RTL name; outputs are checked per port, as transactions
    val inputs = PortWires.of(twin).asScala.filter(_.input()).toSeq
    val outPorts = ArrayBuffer[(String, () => Boolean, () => Array[Long], Seq[String])]()
    for (p <- twin.ports().asScala) {
      val in = p.direction() == Port.Direction.IN
      p.channel() match {
        case s: JStream[_] =>
          if (!in) outPorts += ((p.name(), () => s.fire(), () => values(s.layout(), s.payload()),
            fields(p.name(), s.layout()) :+ (p.name() + "_ready")))
        case f: JFlow[_] =>
          if (!in) outPorts += ((p.name(), () => f.valid(), () => values(f.layout(), f.payload()),
            fields(p.name(), f.layout())))
        case _ => // plain signals are compared cycle by cycle by the cosim lockstep, not here
      }
    }
    val recorded = ArrayBuffer[Array[Long]]()
    val refs = mutable.LinkedHashMap[String, ArrayBuffer[Seq[Long]]]()
    for ((n, _, _, _) <- outPorts) refs(n) = ArrayBuffer()
    core.add(new Clocked {
      override def drive(): Unit = ()
      override def update(): Unit = {
        recorded += inputs.map(_.value().getAsLong).toArray
        for ((n, fired, vals, _) <- outPorts if fired()) refs(n) += vals().toSeq
      }
    })
    for (c <- 0 until cycles) { core.wake(); jsim.runUntil(core.picosOfCycle(c)) }

    // 2. the RTL, replaying, with one scoreboard per output port
    val counts = mutable.Map[String, Long]()
    NicsimSim.config.compile(rtl).doSim(testName, seed) { dut =>
      val io = dut.getAllIo.toSeq.map(s => s.getName() -> s).toMap
      def sig(n: String): BaseType = io.getOrElse(n, throw new IllegalArgumentException(s"RTL has no port $n"))
      for ((n, s) <- io if s.isInput && s != dut.clockDomain.clock && s != dut.clockDomain.reset) s match {
        case b: Bool => b #= false
        case v: BitVector => v #= 0
      }
      dut.clockDomain.forkStimulus(10)
      dut.clockDomain.waitSampling(5)
      val boards = refs.map { case (n, rs) => val sb = ScoreboardInOrder[Seq[Long]](); rs.foreach(sb.pushRef); n -> sb }
      for ((n, _, _, names) <- outPorts) {
        val valid = sig(n + "_valid").asInstanceOf[Bool]
        val ready = if (names.last == n + "_ready") Some(sig(n + "_ready").asInstanceOf[Bool]) else None
        val fieldSigs = names.filterNot(_ == n + "_ready").map(sig)
        dut.clockDomain.onSamplings {
          if (valid.toBoolean && ready.forall(_.toBoolean))
            boards(n).pushDut(fieldSigs.map {
              case b: Bool => if (b.toBoolean) 1L else 0L
              case v: BitVector => v.toBigInt.longValue
            })
        }
      }
      for (c <- 0 until cycles) {
        val row = recorded(c)
        for ((w, i) <- inputs.zipWithIndex) sig(w.name) match {
          case b: Bool => b #= row(i) != 0
          case v: BitVector => v #= BigInt(java.lang.Long.toUnsignedString(row(i)))
        }
        dut.clockDomain.waitSampling()
      }
      // stop at the last recorded edge: further edges would make transactions the Java run never reached
      for ((n, sb) <- boards) { sb.checkEmptyness(); counts(n) = sb.matches }
    }
    for ((n, rs) <- refs) assert(counts(n) == rs.size, s"$n: RTL matched ${counts(n)} of ${rs.size} transactions")
    Outcome(counts.toMap)
  }

  private def fields(port: String, layout: nicsim.sim.Layout[_]): Seq[String] =
    layout.fields().asScala.map(f => s"${port}_payload_${f.name()}").toSeq

  private def values[T](layout: nicsim.sim.Layout[T], p: Any): Array[Long] = layout.values(p.asInstanceOf[T])

}
