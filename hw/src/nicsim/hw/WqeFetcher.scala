package nicsim.hw

import spinal.core._
import spinal.lib._
import scala.jdk.CollectionConverters._
import nicsim.adapter.DoorbellMsg
import nicsim.abi.WqeLayout
import nicsim.adapter.WqePorts.WqeError.Code
import nicsim.adapter.WqeFetcher.Config

/**
 * RTL twin of `nicsim.adapter.WqeFetcher` (its comment states the behaviour and the order in which
 * one edge's updates apply; this file follows it statement for statement): per-SQ registers, a
 * round-robin arbiter, one outstanding DMA read, control-segment checks where a WQE starts, and a
 * two-entry output buffer so response beats flow at one per cycle with a registered ready.
 */
case class WqeFetcher(cfg: Config) extends Component {
  val n = cfg.sqEntries()
  val idxBits = log2Up(n)
  val io = new Bundle {
    val doorbell = slave(Stream(new DoorbellMsgPayload))
    val sqConfig = slave(Flow(new SqConfigPayload))
    val dmaReq = master(Stream(new DmaReadReqPayload))
    val dmaRsp = slave(Stream(new WqebbBeatPayload))
    val wqe = master(Stream(new WqeBeatPayload))
    val error = master(Flow(new WqeErrorPayload))
    val dropped = master(Flow(new DoorbellMsgPayload))
    val wqes = out(UInt(32 bits))
    val wqebbs = out(UInt(32 bits))
    val fetches = out(UInt(32 bits))
    val errors = out(UInt(32 bits))
  }

  case class Sq() extends Bundle {
    val valid, error = Bool()
    val qpn = UInt(24 bits)
    val base = UInt(64 bits)
    val logSize = UInt(4 bits)
    val producer, fetched = UInt(16 bits)
    val remain = UInt(5 bits)
  }
  val sqs = Vec.fill(n)(Reg(Sq()))
  for (s <- sqs) { s.valid.init(False); s.error.init(False) }

  val busy = Reg(Bool()) init (False)
  val reqValid = Reg(Bool()) init (False)
  val dropping = Reg(Bool()) init (False)
  val req = Reg(new DmaReadReqPayload)
  val curSq = Reg(UInt(idxBits bits)) init (0)
  val curCount = Reg(UInt(7 bits)) init (0)
  val curBeat = Reg(UInt(7 bits)) init (0)
  val lastServed = Reg(UInt(idxBits bits)) init (n - 1)
  val errValid = Reg(Bool()) init (False)
  val errReg = Reg(new WqeErrorPayload)
  val dropValid = Reg(Bool()) init (False)
  val dropReg = Reg(new DoorbellMsgPayload)
  def counter() = Reg(UInt(32 bits)) init (0)
  val wqes, wqebbs, fetches, errors = counter()

  // ---- two-entry output buffer
  val outQ = new OutQueue(new WqeBeatPayload, io.wqe)

  io.doorbell.ready := True
  io.dmaReq.valid := reqValid
  io.dmaReq.payload := req
  io.dmaRsp.ready := busy && !reqValid && outQ.count < 2
  io.error.valid := errValid
  io.error.payload := errReg
  io.dropped.valid := dropValid
  io.dropped.payload := dropReg
  io.wqes := wqes; io.wqebbs := wqebbs; io.fetches := fetches; io.errors := errors

  // ---- arbiter, on the state before the edge
  val pending = Bits(n bits)
  for (i <- 0 until n) pending(i) := sqs(i).valid && !sqs(i).error && sqs(i).producer =/= sqs(i).fetched
  val after = Bits(n bits)
  after(0) := False // no queue number is below 0
  for (i <- 1 until n) after(i) := U(i, idxBits bits) > lastServed
  val preferred = pending & after
  val pickOh = Mux(preferred.orR, OHMasking.first(preferred), OHMasking.first(pending))
  val pick = OHToUInt(pickOh)
  val doIssue = !busy && !reqValid && pending.orR

  errValid := False
  dropValid := False

  // 1. output pop (in OutQueue); pushes below append after the remaining entries

  // 2. request accepted
  when(io.dmaReq.fire) { reqValid := False }

  // 3. response beat
  val cur = sqs(curSq)
  val beat = io.dmaRsp.payload
  val w = beat.data_0.asBits
  val opcode = w(31 downto 24).asUInt
  val ctrlIndex = (w(15 downto 8) ## w(23 downto 16)).asUInt
  val ctrlQpn = (w(39 downto 32) ## w(47 downto 40) ## w(55 downto 48)).asUInt
  val ds = w(61 downto 56).asUInt
  val legal = WqeLayout.OPCODES.asScala.map(op => opcode === op.intValue()).reduce(_ || _)
  val code = UInt(3 bits)
  when(!legal) { code := Code.BAD_OPCODE.ordinal() }
    .elsewhen(ds === 0) { code := Code.BAD_DS.ordinal() }
    .elsewhen(ctrlQpn =/= cur.qpn) { code := Code.BAD_QPN.ordinal() }
    .elsewhen(ctrlIndex =/= cur.fetched) { code := Code.BAD_INDEX.ordinal() }
    .otherwise { code := Code.NONE.ordinal() }
  val bbs = (ds +^ 3)(6 downto 2) // WQEBBs of the WQE: ceil(ds * 16 / 64), 1 to 16

  def fail(c: UInt, ctrl: Bits): Unit = {
    errValid := True
    errReg.qpn := cur.qpn
    errReg.index := cur.fetched
    errReg.code := c
    errReg.ctrl := ctrl.asUInt
    cur.error := True
    dropping := True
    errors := errors + 1
  }
  def emit(first: Bool, last: Bool): Unit = {
    val b = new WqeBeatPayload
    b.qpn := cur.qpn
    b.index := cur.fetched
    b.first := first.asUInt
    b.last := last.asUInt
    for (i <- 0 until 8) b(s"data_$i") := beat(s"data_$i")
    outQ.push(b)
    cur.fetched := cur.fetched + 1
    wqebbs := wqebbs + 1
  }

  when(io.dmaRsp.fire) {
    when(dropping || cur.error) {
      // this batch's error is already reported: the rest of it is dropped
    }.elsewhen(beat.status(0)) {
      fail(U(Code.DMA_ERROR.ordinal(), 3 bits), B(0, 64 bits))
    }.otherwise {
      when(cur.remain === 0) {
        when(code =/= 0) {
          fail(code, w)
        }.otherwise {
          emit(True, bbs === 1)
          cur.remain := bbs - 1
          wqes := wqes + 1
        }
      }.otherwise {
        emit(False, cur.remain === 1)
        cur.remain := cur.remain - 1
      }
    }
    curBeat := curBeat + 1
    when(curBeat + 1 === curCount) {
      busy := False
      dropping := False
    }
  }

  // 4. doorbell
  val db = io.doorbell.payload
  val dbSq = sqs(db.qpn(idxBits - 1 downto 0))
  when(io.doorbell.fire) {
    when(db.kind === DoorbellMsg.Kind.SEND.ordinal() && dbSq.valid && dbSq.qpn === db.qpn) {
      dbSq.producer := db.index(15 downto 0)
    }.otherwise {
      dropValid := True
      dropReg := db
    }
  }

  // 5. queue configuration (wins over the updates above)
  val c = io.sqConfig.payload
  val cfgSq = sqs(c.qpn(idxBits - 1 downto 0))
  when(io.sqConfig.valid) {
    cfgSq.valid := c.valid(0)
    cfgSq.qpn := c.qpn
    cfgSq.base := c.base
    cfgSq.logSize := c.logSize
    cfgSq.producer := c.producer
    cfgSq.fetched := c.start
    cfgSq.remain := U(0, 5 bits)
    cfgSq.error := False
  }

  // 6. arbiter's choice: one DMA read of min(batch, pending, WQEBBs to the ring's end)
  val ps = sqs(pick)
  val size = U(1, 17 bits) |<< ps.logSize
  val slot = ps.fetched.resize(17 bits) & (size - 1)
  val pend = (ps.producer - ps.fetched).resize(17 bits)
  val toEnd = size - slot
  val m1 = Mux(pend < toEnd, pend, toEnd)
  val count = Mux(m1 < cfg.batch(), m1(6 downto 0), U(cfg.batch(), 7 bits)) // <= batch <= 64
  when(doIssue) {
    req.addr := ps.base + (slot << 6).resize(64 bits)
    req.length := (count << 6).resize(16 bits)
    req.tag := pick.resize(8 bits)
    reqValid := True
    busy := True
    curSq := pick
    curCount := count
    curBeat := 0
    lastServed := pick
    fetches := fetches + 1
  }
}
