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
    for (i <- 0 until nWords) b(s"data_$i") := v(i * DmaPorts.wordBits(w) + DmaPorts.wordBits(w) - 1 downto i * DmaPorts.wordBits(w)).asUInt
  def slot(a: UInt): UInt = a(addrBits - 1 downto beatShift)

  def doneReg() = { val r = Reg(new DonePayload); r }

  /** A two-entry input queue: push when the stream fires, pop when its head is used. */
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
    when(port.fire) { data(afterPop.resize(1)) := bits(port.payload); flags(afterPop.resize(1)) := port.payload(flag)(0) }
    count := afterPop + port.fire.asUInt.resize(2)
  }

  // ---- host engine
  val hostBusy = Reg(Bool()) init (False)
  val hostToHost, hostErr = Reg(Bool()) init (False)
  val hostAddr = Reg(UInt(64 bits)) init (0)
  val hostSram = Reg(UInt(32 bits)) init (0)
  val hostLeft = Reg(UInt(20 bits)) init (0)
  val hostTag = Reg(UInt(8 bits)) init (0)
  val hostMoved = Reg(UInt(20 bits)) init (0)
  val pciReadValid = Reg(Bool()) init (False)
  val pciReadReg = Reg(new PciReadPayload)
  val hostIn = new InQ(io.pciData, "error")
  val hostOut = new OutQueue(new LayoutBundle(DmaPorts.writeBeat(w)), io.pciWrite)
  // ---- send engine
  val sendBusy = Reg(Bool()) init (False)
  val sendSram = Reg(UInt(32 bits)) init (0)
  val sendLeft = Reg(UInt(20 bits)) init (0)
  val sendTag = Reg(UInt(8 bits)) init (0)
  val sendMoved = Reg(UInt(20 bits)) init (0)
  val sendOut = new OutQueue(new LayoutBundle(linkLayout), io.linkTx)
  // ---- receive engine
  val recvBusy, recvDrain = Reg(Bool()) init (False)
  val recvSram = Reg(UInt(32 bits)) init (0)
  val recvLeft = Reg(UInt(20 bits)) init (0)
  val recvTag = Reg(UInt(8 bits)) init (0)
  val recvMoved = Reg(UInt(20 bits)) init (0)
  val recvIn = new InQ(io.linkRx, "last")

  val lastGrant = Reg(UInt(2 bits)) init (2)
  val hostDoneValid, sendDoneValid, recvDoneValid = Reg(Bool()) init (False)
  val hostDoneReg, sendDoneReg, recvDoneReg = doneReg()
  val beats, stalls = Reg(UInt(32 bits)) init (0)

  io.hostDesc.ready := !hostBusy
  io.sendDesc.ready := !sendBusy
  io.recvDesc.ready := !recvBusy
  io.pciRead.valid := pciReadValid
  io.pciRead.payload := pciReadReg
  io.pciData.ready := hostBusy && !hostToHost && hostIn.count < 2
  io.linkRx.ready := recvBusy && recvIn.count < 2
  io.hostDone.valid := hostDoneValid; io.hostDone.payload := hostDoneReg
  io.sendDone.valid := sendDoneValid; io.sendDone.payload := sendDoneReg
  io.recvDone.valid := recvDoneValid; io.recvDone.payload := recvDoneReg
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

  def done(v: Bool, r: DonePayload, tag: UInt, status: Int, length: UInt): Unit = {
    v := True; r.tag := tag; r.status := U(status, 3 bits); r.length := length
  }

  when(grantValid) {
    lastGrant := grant
    beats := beats + 1
    when(requesting > 1) { stalls := stalls + 1 }
    switch(grant) {
      is(0) {
        when(hostToHost) {
          val b = new LayoutBundle(DmaPorts.writeBeat(w))
          b("addr") := hostAddr
          words(b, sram.readAsync(slot(hostSram)))
          b("last") := (hostLeft === beat).asUInt
          hostOut.push(b)
          hostAddr := hostAddr + beat
        }.otherwise {
          sram.write(slot(hostSram), hostIn.head)
          hostIn.pop()
        }
        hostSram := hostSram + beat
        hostLeft := hostLeft - beat
        hostMoved := hostMoved + beat
        when(hostLeft === beat) { done(hostDoneValid, hostDoneReg, hostTag, Status.OK.ordinal(), hostMoved + beat); hostBusy := False }
      }
      is(1) {
        val b = new LayoutBundle(linkLayout)
        words(b, sram.readAsync(slot(sendSram)))
        b("last") := (sendLeft === beat).asUInt
        sendOut.push(b)
        sendSram := sendSram + beat
        sendLeft := sendLeft - beat
        sendMoved := sendMoved + beat
        when(sendLeft === beat) { done(sendDoneValid, sendDoneReg, sendTag, Status.OK.ordinal(), sendMoved + beat); sendBusy := False }
      }
      default {
        sram.write(slot(recvSram), recvIn.head)
        recvIn.pop()
        recvSram := recvSram + beat
        recvLeft := recvLeft - beat
        recvMoved := recvMoved + beat
        when(recvIn.headFlag) {
          done(recvDoneValid, recvDoneReg, recvTag, Status.OK.ordinal(), recvMoved + beat)
          recvBusy := False
          recvDrain := False
        }.elsewhen(recvLeft === beat) { recvDrain := True }
      }
    }
  }
  when(hostErrDrop) {
    hostIn.pop()
    hostErr := True
    hostLeft := hostLeft - beat
    when(hostLeft === beat) { done(hostDoneValid, hostDoneReg, hostTag, Status.PCI_ERROR.ordinal(), hostMoved); hostBusy := False }
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
  def check(sramAddr: UInt, length: UInt, hostAligned: Bool): UInt = {
    val s = UInt(3 bits)
    val misaligned = length === 0 || length(beatShift - 1 downto 0) =/= 0 || sramAddr(beatShift - 1 downto 0) =/= 0 || !hostAligned
    when(misaligned) { s := Status.MISALIGNED.ordinal() }
      .elsewhen(sramAddr.resize(34 bits) + length.resize(34 bits) > U(BigInt(cfg.sramBytes()), 34 bits)) { s := Status.OUT_OF_SRAM.ordinal() }
      .otherwise { s := Status.OK.ordinal() }
    s
  }
  val hd = io.hostDesc.payload
  val hs = check(hd.sramAddr, hd.length, hd.hostAddr(beatShift - 1 downto 0) === 0)
  when(io.hostDesc.fire) {
    when(hs =/= 0) {
      hostDoneValid := True; hostDoneReg.tag := hd.tag; hostDoneReg.status := hs; hostDoneReg.length := 0
    }.otherwise {
      hostBusy := True
      hostToHost := hd.toHost(0)
      hostErr := False
      hostAddr := hd.hostAddr
      hostSram := hd.sramAddr
      hostLeft := hd.length
      hostTag := hd.tag
      hostMoved := 0
      when(!hd.toHost(0)) {
        pciReadValid := True
        pciReadReg.addr := hd.hostAddr; pciReadReg.length := hd.length; pciReadReg.tag := hd.tag
      }
    }
  }
  val sd = io.sendDesc.payload
  val ss = check(sd.sramAddr, sd.length, True)
  when(io.sendDesc.fire) {
    when(ss =/= 0) {
      sendDoneValid := True; sendDoneReg.tag := sd.tag; sendDoneReg.status := ss; sendDoneReg.length := 0
    }.otherwise {
      sendBusy := True; sendSram := sd.sramAddr; sendLeft := sd.length; sendTag := sd.tag; sendMoved := 0
    }
  }
  val rd = io.recvDesc.payload
  val rs = check(rd.sramAddr, rd.length, True)
  when(io.recvDesc.fire) {
    when(rs =/= 0) {
      recvDoneValid := True; recvDoneReg.tag := rd.tag; recvDoneReg.status := rs; recvDoneReg.length := 0
    }.otherwise {
      recvBusy := True; recvDrain := False; recvSram := rd.sramAddr; recvLeft := rd.length; recvTag := rd.tag; recvMoved := 0
    }
  }
}
