package nicsim.hw

import spinal.core._
import spinal.lib._
import nicsim.adapter.MttPorts
import nicsim.adapter.MttPorts.Status
import nicsim.adapter.MttWalker.Config

/**
 * RTL twin of `nicsim.adapter.MttWalker` (its comment states the checks, the walk and the edge
 * order; this file follows it). The mkey-context table and the translation cache are
 * asynchronous-read memories, so a write on an edge is seen from the next one, as in the model.
 */
case class MttWalker(cfg: Config) extends Component {
  val io = new Bundle {
    val req = slave(Stream(new XlateReqPayload))
    val mkeyWrite = slave(Flow(new MkeyContextPayload))
    val klmWrite = slave(Flow(new KlmEntryPayload))
    val rsp = master(Stream(new XlateRspPayload))
    val fill = master(Stream(new MttFillReqPayload))
    val fillRsp = slave(Stream(new MttFillRspPayload))
    val requests = out(UInt(32 bits))
    val hits = out(UInt(32 bits))
    val misses = out(UInt(32 bits))
    val faults = out(UInt(32 bits))
  }

  val ctxWidth = MttPorts.MKEY_CONTEXT.width()
  val mkeyBits = log2Up(cfg.mkeyEntries())
  val cacheBits = log2Up(cfg.cacheEntries())
  val table = Mem(Bits(ctxWidth bits), cfg.mkeyEntries()) init (Seq.fill(cfg.mkeyEntries())(B(0, ctxWidth bits)))
  // cache entry: bit 0 valid, 32..1 tag (the MTT index), 96..33 the page's physical address
  val cache = Mem(Bits(97 bits), cfg.cacheEntries()) init (Seq.fill(cfg.cacheEntries())(B(0, 97 bits)))
  val klmWidth = MttPorts.KLM_ENTRY.width()
  val klmBits = log2Up(cfg.klmEntries())
  val klm = Mem(Bits(klmWidth bits), cfg.klmEntries()) init (Seq.fill(cfg.klmEntries())(B(0, klmWidth bits)))

  /** The walk's states: waiting for a request, checking a key's context, an indirect key's entries, the MTT, a fill. */
  object Phase extends SpinalEnum(binarySequential) { val IDLE, CHECK, KLM, WALK, FILL = newElement() }
  import Phase._
  val state = Reg(Phase()) init (IDLE)
  val cur = Reg(new XlateReqPayload)
  // what CHECK checks: the request's key and range, or a piece's under an indirect key
  val tMkey = Reg(UInt(32 bits)) init (0)
  val tVa = Reg(UInt(64 bits)) init (0)
  val tLen = Reg(UInt(32 bits)) init (0)
  val inPiece = Reg(Bool()) init (False)
  // an indirect key's walk: KLM base, count, repeats; entry, repeat, its start, the offset, bytes after the piece
  val kBase = Reg(UInt(32 bits)) init (0)
  val kCount = Reg(UInt(16 bits)) init (0)
  val kRepeat = Reg(UInt(32 bits)) init (0)
  val kIdx = Reg(UInt(16 bits)) init (0)
  val kRep = Reg(UInt(32 bits)) init (0)
  val kPos = Reg(UInt(64 bits)) init (0)
  val kOffset = Reg(UInt(64 bits)) init (0)
  val kLeft = Reg(UInt(32 bits)) init (0)
  // the walk needs only these two fields of the checked context
  val ctxShift = Reg(UInt(5 bits)) init (12)
  val ctxMttBase = Reg(UInt(32 bits)) init (0)
  val offset = Reg(UInt(64 bits)) init (0)
  val remaining = Reg(UInt(32 bits)) init (0)
  val outValid = Reg(Bool()) init (False)
  val outReg = Reg(new XlateRspPayload)
  val fillValid = Reg(Bool()) init (False)
  val fillReg = Reg(new MttFillReqPayload)
  def counter() = Reg(UInt(32 bits)) init (0)
  val requests, hits, misses, faults = counter()

  io.req.ready := state === IDLE
  io.rsp.valid := outValid
  io.rsp.payload := outReg
  io.fill.valid := fillValid
  io.fill.payload := fillReg
  io.fillRsp.ready := state === FILL && !fillValid && !outValid
  io.requests := requests; io.hits := hits; io.misses := misses; io.faults := faults

  val canEmit = !outValid || io.rsp.fire
  when(io.rsp.fire) { outValid := False }
  when(io.fill.fire) { fillValid := False }

  def emit(pa: UInt, length: UInt, last: Bool, status: UInt): Unit = {
    outValid := True
    outReg.tag := cur.tag
    outReg.pa := pa
    outReg.length := length
    outReg.last := last.asUInt
    outReg.status := status
    outReg.piece := Mux(status =/= Status.OK.ordinal() && inPiece, (kIdx + 1).resize(16 bits), U(0, 16 bits))
    when(status =/= Status.OK.ordinal()) { faults := faults + 1 }
  }

  // ---- CHECK: the context of the target's mkey, and the checks in the order of docs/sources.md#mtt-walk
  val mkIdx = tMkey(31 downto 8)
  val c = new MkeyContextPayload
  c.assignFromBits(table.readAsync(mkIdx(mkeyBits - 1 downto 0)))
  val zeroBased = c.access(5)
  val rel = Mux(zeroBased, tVa, tVa - c.start)
  val status = UInt(4 bits)
  when(c.state === MttPorts.STATE_NONE || c.index =/= mkIdx) { status := Status.BAD_INDEX.ordinal() }
    .elsewhen(c.key =/= tMkey(7 downto 0)) { status := Status.BAD_KEY.ordinal() }
    .elsewhen(c.pd =/= cur.pd) { status := Status.BAD_PD.ordinal() }
    .elsewhen(c.boundQp(0) && c.qpn =/= cur.qpn) { status := Status.NOT_BOUND.ordinal() }
    .elsewhen((!zeroBased && tVa < c.start) || rel > c.length || tLen.resize(64 bits) > c.length - rel) {
      status := Status.OUT_OF_RANGE.ordinal()
    }
    .elsewhen((cur.access & ~c.access(4 downto 0)) =/= 0) { status := Status.NO_ACCESS.ordinal() }
    .elsewhen(c.state =/= MttPorts.STATE_VALID) { status := Status.NOT_VALID.ordinal() }
    .elsewhen(inPiece && c.indirect(0)) { status := Status.NESTED_INDIRECT.ordinal() }
    .otherwise { status := Status.OK.ordinal() }

  // ---- KLM: the indirect key's entry kIdx of repetition kRep
  val e = new KlmEntryPayload
  e.assignFromBits(klm.readAsync((kBase + kIdx.resize(32 bits)).resize(klmBits bits)))
  val eEnd = kPos + e.length.resize(64 bits)
  val eWithin = kOffset - kPos
  val eLeftInEntry = eEnd - kOffset
  val eTake = Mux(eLeftInEntry < kLeft.resize(64 bits), eLeftInEntry, kLeft.resize(64 bits)).resize(32 bits)

  // ---- WALK: MTT index of the current offset, and the cache
  val shift = ctxShift
  val mttIdx = (ctxMttBase + (offset >> shift).resize(32 bits)).resize(32 bits)
  val slot = mttIdx(cacheBits - 1 downto 0)
  val entry = cache.readAsync(slot)
  val hit = entry(0) && entry(32 downto 1).asUInt === mttIdx
  val pageSize = U(1, 64 bits) |<< shift
  val within = offset & (pageSize - 1)
  val toPageEnd = pageSize - within
  val chunk = Mux(remaining.resize(64 bits) < toPageEnd, remaining.resize(64 bits), toPageEnd)

  val fillOk = state === FILL && io.fillRsp.fire && io.fillRsp.payload.status === MttPorts.FILL_OK
  cache.write(slot, io.fillRsp.payload.pa.asBits ## mttIdx.asBits ## B"1", enable = fillOk)

  switch(state) {
    is(IDLE) {
      when(io.req.fire) {
        cur := io.req.payload
        tMkey := io.req.payload.mkey
        tVa := io.req.payload.va
        tLen := io.req.payload.length
        inPiece := False
        state := CHECK
        requests := requests + 1
      }
    }
    is(CHECK) {
      when(!inPiece && cur.length === 0) {
        when(canEmit) { emit(U(0, 64 bits), U(0, 32 bits), True, U(Status.OK.ordinal(), 4 bits)); state := IDLE }
      }.elsewhen(status =/= Status.OK.ordinal()) {
        when(canEmit) { emit(U(0, 64 bits), U(0, 32 bits), True, status); state := IDLE }
      }.elsewhen(c.indirect(0)) {
        kBase := c.mttBase
        kCount := c.klmCount
        kRepeat := c.repeat
        kIdx := 0
        kRep := 0
        kPos := 0
        kOffset := rel
        kLeft := tLen
        state := KLM
      }.otherwise {
        ctxShift := c.pageShift
        ctxMttBase := c.mttBase
        offset := rel + c.pageOffset.resize(64 bits)
        remaining := tLen
        when(!inPiece) { kLeft := 0 }
        state := WALK
      }
    }
    is(KLM) {
      when(kRep >= kRepeat) { val outOfRange = U(Status.OUT_OF_RANGE.ordinal(), 4 bits)
        when(canEmit) { emit(U(0, 64 bits), U(0, 32 bits), True, outOfRange); state := IDLE }
      }.elsewhen(kOffset >= eEnd) {
        kPos := eEnd
        when(kIdx + 1 === kCount) { kIdx := 0; kRep := kRep + 1 }.otherwise { kIdx := kIdx + 1 }
      }.otherwise {
        tMkey := e.mkey
        tVa := e.va + (kRep * e.stride).resize(64 bits) + eWithin
        tLen := eTake
        kLeft := kLeft - eTake
        kOffset := kOffset + eTake.resize(64 bits)
        inPiece := True
        state := CHECK
      }
    }
    is(WALK) {
      when(!hit) {
        fillValid := True
        fillReg.index := mttIdx
        state := FILL
        misses := misses + 1
      }.elsewhen(canEmit) { val last = chunk === remaining.resize(64 bits) && kLeft === 0
        emit(entry(96 downto 33).asUInt + within, chunk.resize(32 bits), last, U(Status.OK.ordinal(), 4 bits))
        hits := hits + 1
        remaining := remaining - chunk.resize(32 bits)
        offset := offset + chunk
        when(chunk === remaining.resize(64 bits)) { state := Mux(kLeft === 0, IDLE, KLM) }
      }
    }
    is(FILL) {
      when(io.fillRsp.fire) {
        when(io.fillRsp.payload.status === MttPorts.FILL_OK) {
          state := WALK
        }.elsewhen(io.fillRsp.payload.status === MttPorts.FILL_NOT_PRESENT) {
          emit(mttIdx.resize(64 bits), remaining, True, U(Status.PAGE_FAULT.ordinal(), 4 bits))
          state := IDLE
        }.otherwise {
          emit(U(0, 64 bits), U(0, 32 bits), True, U(Status.MTT_FAULT.ordinal(), 4 bits))
          state := IDLE
        }
      }
    }
  }

  // ---- mkey-context writes, seen from the next edge
  val w = io.mkeyWrite.payload
  table.write(w.index(mkeyBits - 1 downto 0), w.asBits, enable = io.mkeyWrite.valid)
  val kw = io.klmWrite.payload
  klm.write(kw.index(klmBits - 1 downto 0), kw.asBits, enable = io.klmWrite.valid)
}
