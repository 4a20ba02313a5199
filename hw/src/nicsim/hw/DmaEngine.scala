package nicsim.hw

import spinal.core._
import spinal.lib._
import nicsim.adapter.DmaPorts
import nicsim.adapter.DmaPorts.Done.Status
import nicsim.adapter.DmaEngine.Config

/**
 * RTL twin of `nicsim.adapter.DmaEngine` (its comment states the behaviour and the edge order;
 * this file follows it): host, send and receive engines around an asynchronous-read SRAM on one
 * local bus granted round-robin, two-entry input and output queues.
 */
case class DmaEngine(cfg: Config) extends Component {
  val w = cfg.widthBits()
  val beat = cfg.beatBytes()
  val nWords = DmaPorts.words(w)
  val entries = (cfg.sramBytes() / beat).toInt
  val addrBits = log2Up(cfg.sramBytes())
  val beatShift = log2Up(beat)
  // Registers hold only the bits the block reads: an SRAM pointer is a beat slot, a length a count of beats
  // (an accepted descriptor is whole beats, ends within the SRAM and is at most the 20-bit field), a host
  // address its beat number. The twin's Config bounds the SRAM to 1 GiB, within the 32-bit sramAddr.
  val slotBits = addrBits - beatShift
  val beatsBits = Math.min(DmaPorts.LINK_DESC.field("length").width(), addrBits + 1) - beatShift
  require(addrBits < DmaPorts.LINK_DESC.field("sramAddr").width(),
    s"core.sram.size / dma.channels: ${cfg.sramBytes()} B is more than the descriptor's sramAddr can address")
  val dataLayout = DmaPorts.beat(w, "error")
  val linkLayout = DmaPorts.beat(w, "last")
  val io = new Bundle {
    val hostDesc = slave(Stream(new HostDescPayload))
    val pciRead = master(Stream(new PciReadPayload))
    val pciData = slave(Stream(new LayoutBundle(dataLayout)))
    val pciWrite = master(Stream(new LayoutBundle(DmaPorts.writeBeat(w))))
    val hostDone = master(Flow(new DonePayload))
    val sendDesc = slave(Stream(new LinkDescPayload))
    val linkTx = master(Stream(new LayoutBundle(linkLayout)))
    val sendDone = master(Flow(new DonePayload))
    val recvDesc = slave(Stream(new LinkDescPayload))
    val linkRx = slave(Stream(new LayoutBundle(linkLayout)))
    val recvDone = master(Flow(new DonePayload))
    val beats = out(UInt(32 bits))
    val stalls = out(UInt(32 bits))
  }

  val sram = Mem(Bits(w bits), entries)
  def bits(b: LayoutBundle): Bits = Cat((0 until nWords).map(i => b(s"data_$i")))
  def words(b: LayoutBundle, v: Bits): Unit =
    for (i <- 0 until nWords) b(s"data_$i") := v.subdivideIn(nWords slices)(i).asUInt
  def slot(a: UInt): UInt = a(addrBits - 1 downto beatShift)
  def inBeats(length: UInt): UInt = length(beatShift + beatsBits - 1 downto beatShift)
  /** A count of beats as the 20-bit byte length of a done report. */
  def bytes(n: UInt): UInt = (n @@ U(0, beatShift bits)).resize(DmaPorts.DONE.field("length").width())

  /** A done report's registers, its length in beats (zero for a refused descriptor). */
  class DoneReg {
    val tag = Reg(UInt(8 bits))
    val status = Reg(UInt(3 bits))
    val beats = Reg(UInt(beatsBits bits))
    def drive(p: DonePayload): Unit = { p.tag := tag; p.status := status; p.length := bytes(beats) }
    def refuse(t: UInt, s: UInt): Unit = { tag := t; status := s; beats := 0 }
  }

  /**
   * A two-entry input queue: push when the stream fires, pop when its head is used. Entry 1 is read
   * only while two entries are held: a push that lands at the head leaves it unread until the next push.
   */
  class InQ(port: Stream[LayoutBundle], flag: String) {
    val data = Vec.fill(2)(Reg(Bits(w bits)))
    val flags = Vec.fill(2)(Reg(Bool()))
    val count = Reg(UInt(2 bits)) init (0)
    val head = data(0)
    val headFlag = flags(0)
    val nonEmpty = count =/= 0
    val popped = Bool()
    popped := False
    def pop(): Unit = popped := True
    val afterPop = count - popped.asUInt.resize(2)
    when(popped) { data(0) := data(1); flags(0) := flags(1) }
    when(port.fire) {data(afterPop.resize(1)) := bits(port.payload); flags(afterPop.resize(1)) := port.payload(flag)(0)}
    count := afterPop + port.fire.asUInt.resize(2)
  }

  // ---- host engine
  val hostBusy = Reg(Bool()) init (False)
  val hostToHost, hostErr = Reg(Bool()) init (False)
  val hostAddr = Reg(UInt(64 - beatShift bits)) init (0)
  val hostSram = Reg(UInt(slotBits bits)) init (0)
  val hostLeft = Reg(UInt(beatsBits bits)) init (0)
  val hostTag = Reg(UInt(8 bits)) init (0)
  val hostMoved = Reg(UInt(beatsBits bits)) init (0)
  val pciReadValid = Reg(Bool()) init (False)
  val pciReadAddr = Reg(UInt(64 - beatShift bits))
  val pciReadBeats = Reg(UInt(beatsBits bits))
  val pciReadTag = Reg(UInt(8 bits))
  val hostIn = new InQ(io.pciData, "error")
  val hostOut = new OutQueue(new LayoutBundle(DmaPorts.writeBeat(w)), io.pciWrite)
  // ---- send engine
  val sendBusy = Reg(Bool()) init (False)
  val sendSram = Reg(UInt(slotBits bits)) init (0)
  val sendLeft = Reg(UInt(beatsBits bits)) init (0)
  val sendTag = Reg(UInt(8 bits)) init (0)
  val sendMoved = Reg(UInt(beatsBits bits)) init (0)
  val sendOut = new OutQueue(new LayoutBundle(linkLayout), io.linkTx)
  // ---- receive engine
  val recvBusy, recvDrain = Reg(Bool()) init (False)
  val recvSram = Reg(UInt(slotBits bits)) init (0)
  val recvLeft = Reg(UInt(beatsBits bits)) init (0)
  val recvTag = Reg(UInt(8 bits)) init (0)
  val recvMoved = Reg(UInt(beatsBits bits)) init (0)
  val recvIn = new InQ(io.linkRx, "last")

  val lastGrant = Reg(UInt(2 bits)) init (2)
  val hostDoneValid, sendDoneValid, recvDoneValid = Reg(Bool()) init (False)
  val hostDoneReg, sendDoneReg, recvDoneReg = new DoneReg
  val beats, stalls = Reg(UInt(32 bits)) init (0)

  io.hostDesc.ready := !hostBusy
  io.sendDesc.ready := !sendBusy
  io.recvDesc.ready := !recvBusy
  io.pciRead.valid := pciReadValid
  io.pciRead.payload.addr := pciReadAddr @@ U(0, beatShift bits)
  io.pciRead.payload.length := bytes(pciReadBeats)
  io.pciRead.payload.tag := pciReadTag
  io.pciData.ready := hostBusy && !hostToHost && hostIn.count < 2
  io.linkRx.ready := recvBusy && recvIn.count < 2
  io.hostDone.valid := hostDoneValid; hostDoneReg.drive(io.hostDone.payload)
  io.sendDone.valid := sendDoneValid; sendDoneReg.drive(io.sendDone.payload)
  io.recvDone.valid := recvDoneValid; recvDoneReg.drive(io.recvDone.payload)
  io.beats := beats; io.stalls := stalls

  // ---- bus requests and the round-robin grant, on the state before the edge
  val hostHeadBad = hostIn.nonEmpty && (hostErr || hostIn.headFlag)
  val req = Vec(
    hostBusy && Mux(hostToHost, hostLeft =/= 0 && hostOut.count < 2, hostIn.nonEmpty && !hostHeadBad),
    sendBusy && sendLeft =/= 0 && sendOut.count < 2,
    recvBusy && recvIn.nonEmpty && !recvDrain)
  // grant index: the first requester after lastGrant
  val grantValid = req.asBits.orR
  val grant = UInt(2 bits)
  grant := 0
  for (j <- 0 until 3) when(lastGrant === j) {
    when(req((j + 1) % 3)) { grant := (j + 1) % 3 }
      .elsewhen(req((j + 2) % 3)) { grant := (j + 2) % 3 }
      .otherwise { grant := j }
  }
  val requesting = req.map(_.asUInt.resize(2 bits)).reduce(_ + _)
  val hostErrDrop = hostBusy && !hostToHost && hostHeadBad
  val recvDrop = recvBusy && recvIn.nonEmpty && recvDrain

  hostDoneValid := False; sendDoneValid := False; recvDoneValid := False
  when(io.pciRead.fire) { pciReadValid := False }

  def done(v: Bool, r: DoneReg, tag: UInt, status: Int, beats: UInt): Unit = {
    v := True; r.tag := tag; r.status := U(status, 3 bits); r.beats := beats
  }

  when(grantValid) {
    lastGrant := grant
    beats := beats + 1
    when(requesting > 1) { stalls := stalls + 1 }
    switch(grant) {
      is(0) {
        when(hostToHost) {
          val b = new LayoutBundle(DmaPorts.writeBeat(w))
          b("addr") := hostAddr @@ U(0, beatShift bits)
          words(b, sram.readAsync(hostSram))
          b("last") := (hostLeft === 1).asUInt
          hostOut.push(b)
          hostAddr := hostAddr + 1
        }.otherwise {
          sram.write(hostSram, hostIn.head)
          hostIn.pop()
        }
        hostSram := hostSram + 1
        hostLeft := hostLeft - 1
        hostMoved := hostMoved + 1
        when(hostLeft === 1) {
          done(hostDoneValid, hostDoneReg, hostTag, Status.OK.ordinal(), hostMoved + 1); hostBusy := False
        }
      }
      is(1) {
        val b = new LayoutBundle(linkLayout)
        words(b, sram.readAsync(sendSram))
        b("last") := (sendLeft === 1).asUInt
        sendOut.push(b)
        sendSram := sendSram + 1
        sendLeft := sendLeft - 1
        sendMoved := sendMoved + 1
        when(sendLeft === 1) {
          done(sendDoneValid, sendDoneReg, sendTag, Status.OK.ordinal(), sendMoved + 1); sendBusy := False
        }
      }
      default {
        sram.write(recvSram, recvIn.head)
        recvIn.pop()
        recvSram := recvSram + 1
        recvLeft := recvLeft - 1
        recvMoved := recvMoved + 1
        when(recvIn.headFlag) {
          done(recvDoneValid, recvDoneReg, recvTag, Status.OK.ordinal(), recvMoved + 1)
          recvBusy := False
          recvDrain := False
        }.elsewhen(recvLeft === 1) { recvDrain := True }
      }
    }
  }
  when(hostErrDrop) {
    hostIn.pop()
    hostErr := True
    hostLeft := hostLeft - 1
    when(hostLeft === 1) {
      done(hostDoneValid, hostDoneReg, hostTag, Status.PCI_ERROR.ordinal(), hostMoved); hostBusy := False
    }
  }
  when(recvDrop) {
    recvIn.pop()
    when(recvIn.headFlag) {
      done(recvDoneValid, recvDoneReg, recvTag, Status.OVERRUN.ordinal(), recvMoved)
      recvBusy := False
      recvDrain := False
    }
  }

  // ---- descriptors
  /** Past the SRAM's end: a start at or past it, or a start within it plus the length beyond it. */
  def outOfSram(sramAddr: UInt, length: UInt): Bool = {
    val n = Math.max(addrBits, length.getWidth) + 1
    val end = sramAddr(addrBits - 1 downto 0).resize(n bits) + length.resize(n bits)
    sramAddr(sramAddr.getWidth - 1 downto addrBits) =/= 0 || end > U(BigInt(cfg.sramBytes()), n bits)
  }
  def check(sramAddr: UInt, length: UInt, hostAligned: Bool): UInt = {
    val s = UInt(3 bits); val low = beatShift - 1
    val misaligned = length === 0 || length(low downto 0) =/= 0 || sramAddr(low downto 0) =/= 0 || !hostAligned
    when(misaligned) { s := Status.MISALIGNED.ordinal() }
      .elsewhen(outOfSram(sramAddr, length)) { s := Status.OUT_OF_SRAM.ordinal() }
      .otherwise { s := Status.OK.ordinal() }
    s
  }
  val hd = io.hostDesc.payload
  val hs = check(hd.sramAddr, hd.length, hd.hostAddr(beatShift - 1 downto 0) === 0)
  when(io.hostDesc.fire) {
    when(hs =/= 0) {
      hostDoneValid := True; hostDoneReg.refuse(hd.tag, hs)
    }.otherwise {
      hostBusy := True
      hostToHost := hd.toHost(0)
      hostErr := False
      hostAddr := hd.hostAddr(63 downto beatShift)
      hostSram := slot(hd.sramAddr)
      hostLeft := inBeats(hd.length)
      hostTag := hd.tag
      hostMoved := 0
      when(!hd.toHost(0)) {
        pciReadValid := True
        pciReadAddr := hd.hostAddr(63 downto beatShift); pciReadBeats := inBeats(hd.length); pciReadTag := hd.tag
      }
    }
  }
  val sd = io.sendDesc.payload
  val ss = check(sd.sramAddr, sd.length, True)
  when(io.sendDesc.fire) {
    when(ss =/= 0) {
      sendDoneValid := True; sendDoneReg.refuse(sd.tag, ss)
    }.otherwise {
      sendBusy := True; sendSram := slot(sd.sramAddr); sendLeft := inBeats(sd.length); sendTag := sd.tag; sendMoved := 0
    }
  }
  val rd = io.recvDesc.payload
  val rs = check(rd.sramAddr, rd.length, True)
  when(io.recvDesc.fire) {
    when(rs =/= 0) {
      recvDoneValid := True; recvDoneReg.refuse(rd.tag, rs)
    }.otherwise {
      recvBusy := True; recvDrain := False; recvSram := slot(rd.sramAddr); recvLeft := inBeats(rd.length)
      recvTag := rd.tag; recvMoved := 0
    }
  }
}
