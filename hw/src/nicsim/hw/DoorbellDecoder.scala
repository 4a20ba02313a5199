package nicsim.hw

import spinal.core._
import spinal.lib._
import nicsim.adapter.{DoorbellError, DoorbellMsg}
import nicsim.abi.UarLayout
import nicsim.adapter.DoorbellDecoder.Config

/**
 * RTL twin of `nicsim.adapter.DoorbellDecoder` (read its comment for the behaviour): same ports,
 * same payload layouts, same cycle timing. Parameters come from the same Config record the Java
 * model builds from the profile.
 *
 * Pipeline: io_mmio is registered (s1); s1 is decoded, checked against the queue tables
 * (asynchronous-read memories, so a table write on the same edge is seen from the next one) and
 * either queued, coalesced into a waiting entry, or refused; io_doorbell and io_error are driven
 * from registers.
 */
case class DoorbellDecoder(cfg: Config) extends Component {
  val depth = cfg.fifoDepth()
  val io = new Bundle {
    val mmio = slave(Flow(new MmioWritePayload))
    val tableWrite = slave(Flow(new QueueTableWritePayload))
    val doorbell = master(Stream(new DoorbellMsgPayload))
    val error = master(Flow(new DoorbellErrorPayload))
    val seen = out(UInt(32 bits))
    val coalesced = out(UInt(32 bits))
    val overflowed = out(UInt(32 bits))
    val rejected = out(UInt(32 bits))
    val occupancy = out(UInt(log2Up(depth + 1) bits))
  }

  // ---- queue tables: bit 40 valid, 39..16 tag (whole queue number), 15..0 owning UAR page
  val idxBits = log2Up(cfg.tableEntries())
  def table() = Mem(Bits(41 bits), cfg.tableEntries()) init (Seq.fill(cfg.tableEntries())(B(0, 41 bits)))
  val qpTable = table()
  val cqTable = table()
  val tw = io.tableWrite.payload
  val twEntry = Mux(tw.valid(0), B"1" ## tw.qpn.asBits ## tw.uar.asBits, B(0, 41 bits))
  qpTable.write(tw.qpn(idxBits - 1 downto 0), twEntry, enable = io.tableWrite.valid && !tw.cq(0))
  cqTable.write(tw.qpn(idxBits - 1 downto 0), twEntry, enable = io.tableWrite.valid && tw.cq(0))

  // ---- stage 1: the registered write
  val s1Valid = RegNext(io.mmio.valid) init (False)
  val s1 = RegNextWhen(io.mmio.payload, io.mmio.valid)
  val offset = s1.offset
  val data = s1.data.asBits
  val byte = (0 until 8).map(i => data(8 * i + 7 downto 8 * i))

  val pageBits = log2Up(cfg.pageSize())
  val rel = (offset.resize(33 bits) - U(BigInt(cfg.windowBase()), 33 bits))
  val inWindow = offset >= U(BigInt(cfg.windowBase()), 32 bits) && rel < U(BigInt(cfg.windowSize()), 33 bits)
  val page = rel(pageBits + 15 downto pageBits) // a window holds at most 65536 pages (Config checks)
  val po = rel(pageBits - 1 downto 0); val bfEnd = UarLayout.BF_OFFSET + UarLayout.BF_REGS * cfg.bfRegSize()
  val isSend = po >= UarLayout.BF_OFFSET && po.resize(pageBits + 1) < bfEnd
  val isArm = po === UarLayout.CQ_DOORBELL
  // bytes 0..3 are the first big-endian word, 4..7 the second (sources.md#mlx5-doorbells, #mlx5-cq-ownership)
  val qpn = Mux(isSend, (byte(4) ## byte(5) ## byte(6)).asUInt, (byte(5) ## byte(6) ## byte(7)).asUInt)
  val qpnFits = isSend || byte(4) === 0
  val entry = Mux(isSend, qpTable.readAsync(qpn(idxBits - 1 downto 0)), cqTable.readAsync(qpn(idxBits - 1 downto 0)))
  val entryOk = entry(40) && entry(39 downto 16).asUInt === qpn

  val code = UInt(3 bits)
  when(!inWindow) { code := DoorbellError.Code.OUT_OF_WINDOW.ordinal() }
    .elsewhen(!isSend && !isArm) { code := DoorbellError.Code.UNKNOWN_REGISTER.ordinal() }
    .elsewhen(s1.length =/= 8) { code := DoorbellError.Code.BAD_SIZE.ordinal() }
    .elsewhen(!qpnFits || !entryOk) { code := DoorbellError.Code.BAD_QUEUE.ordinal() }
    .elsewhen(entry(15 downto 0).asUInt =/= page) { code := DoorbellError.Code.NOT_OWNER.ordinal() }
    .otherwise { code := DoorbellError.Code.NONE.ordinal() }

  val msg = new DoorbellMsgPayload
  msg.qpn := qpn
  // send: the ctrl segment's index plus its WQE's WQEBBs (DS 0: the index is the producer counter)
  val sendDs = byte(7)(5 downto 0).asUInt
  val sendProducer = (byte(1) ## byte(2)).asUInt + (sendDs +^ 3)(6 downto 2).resize(16 bits)
  msg.index := Mux(isSend, sendProducer.resize(24 bits), (byte(1) ## byte(2) ## byte(3)).asUInt)
  msg.kind := Mux(isSend, U(DoorbellMsg.Kind.SEND.ordinal(), 2 bits), U(DoorbellMsg.Kind.CQ_ARM.ordinal(), 2 bits))
  msg.sn := Mux(isSend, U(0, 2 bits), byte(0)(5 downto 4).asUInt)
  msg.solicited := Mux(isSend, U(0, 1 bits), byte(0)(0 downto 0).asUInt)

  // ---- the coalescing FIFO: entry 0 is the head; keys (queue, kind) are unique among entries 1..count-1
  val entries = Vec(Reg(new DoorbellMsgPayload), depth)
  val count = Reg(UInt(log2Up(depth + 1) bits)) init (0)
  io.doorbell.valid := count =/= 0
  io.doorbell.payload := entries(0)
  io.occupancy := count

  val pop = io.doorbell.fire
  val after = Vec((0 until depth).map(i => if (i + 1 < depth) Mux(pop, entries(i + 1), entries(i)) else entries(i)))
  val countAfter = count - pop.asUInt.resize(count.getWidth)
  val accept = s1Valid && code === 0
  // the head being offered on io_doorbell is frozen until it fires (stream contract): it never merges
  val matches = Vec((0 until depth).map(i => (if (i == 0) pop else True) && U(i) < countAfter &&
    after(i).qpn === msg.qpn && after(i).kind === msg.kind))
  val hit = matches.orR
  val append = accept && !hit && countAfter =/= depth
  val overflow = accept && !hit && countAfter === depth
  for (i <- 0 until depth) {
    entries(i) := after(i)
    when((accept && hit && matches(i)) || (append && countAfter === i)) { entries(i) := msg }
  }
  count := countAfter + append.asUInt.resize(count.getWidth)

  // ---- refusals and drops, reported the edge after
  val errValid = RegNext(s1Valid && (code =/= 0 || overflow)) init (False)
  val errPayload = Reg(new DoorbellErrorPayload)
  when(s1Valid) {
    errPayload.code := Mux(overflow, U(DoorbellError.Code.OVERFLOW.ordinal(), 3 bits), code)
    errPayload.offset := offset
    errPayload.data := s1.data
  }
  io.error.valid := errValid
  io.error.payload := errPayload

  // ---- counters (wrap at 32 bits)
  def counter(inc: Bool): UInt = { val c = Reg(UInt(32 bits)) init (0); when(inc) { c := c + 1 }; c }
  io.seen := counter(s1Valid)
  io.rejected := counter(s1Valid && code =/= 0)
  io.coalesced := counter(accept && hit)
  io.overflowed := counter(overflow)
}
