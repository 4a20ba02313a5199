package nicsim.hw

import spinal.core._
import spinal.lib._
import nicsim.adapter.DoorbellMsg
import nicsim.adapter.CqePorts.CqError.Code
import nicsim.adapter.CqeWriter.Config

/**
 * RTL twin of `nicsim.adapter.CqeWriter` (its comment states the behaviour and the edge order;
 * this file follows it): per-CQ registers, the owner bit from the ring lap, overflow against the
 * consumer index, one-shot arming (an arm behind the producer, with an entry written since the CQ's
 * last event, raises its event on the next edge, from a one-entry register that holds completions
 * and arms off meanwhile), and a one-entry output
 * register for the 64-byte CQE write.
 */
case class CqeWriter(cfg: Config) extends Component {
  val n = cfg.cqEntries()
  val idxBits = log2Up(n)
  val io = new Bundle {
    val cqConfig = slave(Flow(new CqConfigPayload))
    val cqe = slave(Stream(new CqeInPayload))
    val arm = slave(Stream(new DoorbellMsgPayload))
    val ci = slave(Flow(new CqCiPayload))
    val write = master(Stream(new Write64Payload))
    val event = master(Flow(new CqEventPayload))
    val error = master(Flow(new CqErrorPayload))
    val dropped = master(Flow(new DoorbellMsgPayload))
    val cqes = out(UInt(32 bits))
    val events = out(UInt(32 bits))
    val errors = out(UInt(32 bits))
  }

  case class Cq() extends Bundle {
    val valid, error, armed, solicitedOnly = Bool()
    val unreported = Bool() // an entry written since the CQ's last event: an arm behind the producer owes one
    val cqn = UInt(24 bits)
    val base = UInt(64 bits)
    val vector = UInt(11 bits)
    val logSize = UInt(5 bits)
    val pi, ci = UInt(24 bits)
  }
  val cqs = Vec.fill(n)(Reg(Cq()))
  // valid, armed and unreported reset to the twin's new Cq(): no CQ, none armed. The last two are read only through
  // a valid CQ, so their reset value changes nothing the ports show; it gives a proof a known start state
  // (docs/blocks.md, "Proving")
  for (c <- cqs) { c.valid.init(False); c.armed.init(False); c.unreported.init(False) }

  val outValid = Reg(Bool()) init (False)
  val outReg = Reg(new Write64Payload)
  val eventValid = Reg(Bool()) init (False)
  val eventReg = Reg(new CqEventPayload)
  val errorValid = Reg(Bool()) init (False)
  val errorReg = Reg(new CqErrorPayload)
  val armEventValid = Reg(Bool()) init (False)
  val armEvent = Reg(new CqEventPayload)
  val droppedValid = Reg(Bool()) init (False)
  val droppedReg = Reg(new DoorbellMsgPayload)
  def counter() = Reg(UInt(32 bits)) init (0)
  val cqes, events, errors = counter()

  io.cqe.ready := !outValid && !armEventValid
  io.arm.ready := !armEventValid
  io.write.valid := outValid; io.write.payload := outReg
  io.event.valid := eventValid; io.event.payload := eventReg
  io.error.valid := errorValid; io.error.payload := errorReg
  io.dropped.valid := droppedValid; io.dropped.payload := droppedReg
  io.cqes := cqes; io.events := events; io.errors := errors

  eventValid := False
  errorValid := False
  droppedValid := False
  when(io.write.fire) { outValid := False }

  // ---- the event an arm raised on the edge before
  when(armEventValid) {
    eventValid := True
    eventReg := armEvent
    armEventValid := False
    events := events + 1
  }

  // ---- completion, on the state before the edge
  val in = io.cqe.payload
  val c = cqs(in.cqn(idxBits - 1 downto 0))
  val known = c.valid && c.cqn === in.cqn
  val size = U(1, 33 bits) |<< c.logSize
  val used = (c.pi - c.ci).resize(33 bits)
  val code = UInt(2 bits)
  when(!known) { code := Code.UNKNOWN_CQ.ordinal() }
    .elsewhen(c.error) { code := Code.CQ_IN_ERROR.ordinal() }
    .elsewhen(used >= size) { code := Code.OVERFLOW.ordinal() }
    .otherwise { code := Code.NONE.ordinal() }
  val fires = c.armed && (!c.solicitedOnly || in.solicited(0))
  when(io.cqe.fire) {
    when(code =/= 0) {
      when(code === Code.OVERFLOW.ordinal()) { c.error := True }
      errorValid := True
      errorReg.cqn := in.cqn
      errorReg.code := code
      errors := errors + 1
    }.otherwise {
      val owner = (c.pi.resize(33 bits) & size) =/= 0
      val slot = c.pi.resize(33 bits) & (size - 1)
      outValid := True
      outReg.addr := c.base + (slot << 6).resize(64 bits)
      for (i <- 0 until 7) outReg(s"data_$i") := in(s"data_$i")
      outReg.data_7 := (in.data_7(63 downto 57) ## owner ## in.data_7(55 downto 0)).asUInt
      c.pi := c.pi + 1
      cqes := cqes + 1
      c.unreported := !fires
      when(fires) {
        eventValid := True
        eventReg.cqn := c.cqn
        eventReg.vector := c.vector
        c.armed := False
        events := events + 1
      }
    }
  }

  // ---- arm
  val m = io.arm.payload
  val a = cqs(m.qpn(idxBits - 1 downto 0))
  val armKnown = a.valid && a.cqn === m.qpn && m.kind === DoorbellMsg.Kind.CQ_ARM.ordinal()
  // the producer after this edge's completion (taken first, as in the twin): entries not polled yet
  // make the event go at once
  val sameSlot = in.cqn(idxBits - 1 downto 0) === m.qpn(idxBits - 1 downto 0)
  val written = io.cqe.fire && code === Code.NONE.ordinal() && sameSlot
  val piNow = Mux(written, a.pi + 1, a.pi)
  // and some of them written since the CQ's last event (one this edge's completion raised reported them all)
  val unreportedNow = Mux(written, !fires, a.unreported)
  val raise = io.arm.fire && armKnown && piNow =/= m.index && !m.solicited(0) && unreportedNow
  when(io.arm.fire) {
    when(!armKnown) {
      droppedValid := True
      droppedReg := m
    }.otherwise {
      a.armed := !raise
      a.solicitedOnly := m.solicited(0)
      a.ci := m.index
    }
  }
  when(raise) {
    a.unreported := False
    armEventValid := True
    armEvent.cqn := a.cqn
    armEvent.vector := a.vector
  }

  // ---- consumer index
  val u = io.ci.payload
  val uc = cqs(u.cqn(idxBits - 1 downto 0))
  when(io.ci.valid && uc.valid && uc.cqn === u.cqn) { uc.ci := u.ci }

  // ---- configuration (wins)
  val k = io.cqConfig.payload
  val kc = cqs(k.cqn(idxBits - 1 downto 0))
  when(io.cqConfig.valid) {
    when(raise && m.qpn(idxBits - 1 downto 0) === k.cqn(idxBits - 1 downto 0)) { armEventValid := False } // wins
    kc.valid := k.valid(0)
    kc.cqn := k.cqn
    kc.base := k.base
    kc.logSize := k.logSize
    kc.vector := k.vector
    kc.pi := k.pi
    kc.ci := k.ci
    kc.armed := False
    kc.solicitedOnly := False
    kc.unreported := False
    kc.error := False
  }
}
