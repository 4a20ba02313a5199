package nicsim.hw

import scala.collection.mutable
import scala.util.Random
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._
import spinal.core.sim._
import nicsim.adapter.{DoorbellError, DoorbellMsg, MmioWrite, QueueTableWrite, UarLayout}
import nicsim.adapter.{DoorbellDecoder => JDecoder}
import nicsim.profile.Profiles
import nicsim.sim.{Clocked, Simulator}

/**
 * DoorbellDecoder RTL vs its Java twin in lockstep: the same seeded stream of doorbell writes (good
 * ones, and every kind the decoder must refuse), queue-table updates and random back-pressure go
 * to both, and every output is compared on every edge.
 */
class DoorbellDecoderSimTest extends AnyFunSuite {
  val cfg: JDecoder.Config = JDecoder.Config.from(Profiles.load("cx-gen3x16"))
  lazy val compiled = NicsimSim.config.compile(DoorbellDecoder(cfg))

  /** Seeded doorbell traffic: a pool of queues with owners, and writes that are right or wrong in one way each. */
  final class Stimulus(seed: Long) {
    val rnd = new Random(seed)
    val pages = 8
    // queue numbers whose low bits collide, so the tag check matters
    val qps: IndexedSeq[Long] = IndexedSeq.tabulate(44)(i => 0x100L + i) ++ IndexedSeq.tabulate(4)(i => 0x100L + i + cfg.tableEntries())
    val cqs: IndexedSeq[Long] = IndexedSeq.tabulate(6)(i => 0x40 + i)
    val owner = mutable.Map[(Int, Long), Int]() // (cq?1:0, qpn) -> page
    def pageBase(p: Int): Long = cfg.windowBase() + p.toLong * cfg.pageSize()

    /** Creates every queue once, in order, before the random traffic (then tableWrite() churns them). */
    val setup: mutable.Queue[QueueTableWrite] = mutable.Queue.from(
      qps.map(q => { owner((0, q)) = rnd.nextInt(pages); new QueueTableWrite(0, q, owner((0, q)).toLong, 1) }) ++
      cqs.map(q => { owner((1, q)) = rnd.nextInt(pages); new QueueTableWrite(1, q, owner((1, q)).toLong, 1) }))

    def tableWrite(): QueueTableWrite = {
      val cq = rnd.nextInt(3) == 0
      val qpn = if (cq) cqs(rnd.nextInt(cqs.size)) else qps(rnd.nextInt(qps.size))
      val create = rnd.nextInt(10) != 0
      if (create) owner((if (cq) 1 else 0, qpn)) = rnd.nextInt(pages) else owner.remove((if (cq) 1 else 0, qpn))
      new QueueTableWrite(if (cq) 1 else 0, qpn, owner.getOrElse((if (cq) 1 else 0, qpn), 0).toLong, if (create) 1 else 0)
    }

    private def sendBytes(qpn: Long, idx: Int): Array[Byte] =
      Array[Byte](0, (idx >> 8).toByte, idx.toByte, 0x0a, (qpn >> 16).toByte, (qpn >> 8).toByte, qpn.toByte, 3)

    def mmio(): MmioWrite = {
      val qpn = qps(rnd.nextInt(qps.size))
      val page = owner.getOrElse((0, qpn), rnd.nextInt(pages))
      val bf = UarLayout.BF_OFFSET + rnd.nextInt(UarLayout.BF_REGS) * cfg.bfRegSize()
      val idx = rnd.nextInt(1 << 16)
      rnd.nextInt(100) match {
        case r if r < 55 => MmioWrite.of(pageBase(page) + bf, sendBytes(qpn, idx))
        case r if r < 70 =>
          val cqn = cqs(rnd.nextInt(cqs.size))
          val p = owner.getOrElse((1, cqn), rnd.nextInt(pages))
          val ci = rnd.nextInt(1 << 24)
          val w0 = (rnd.nextInt(4) << 28) | (if (rnd.nextBoolean()) UarLayout.CQ_ARM_SOLICITED else 0) | ci
          MmioWrite.of(pageBase(p) + UarLayout.CQ_DOORBELL, Array[Byte]((w0 >> 24).toByte, (w0 >> 16).toByte, (w0 >> 8).toByte, w0.toByte,
            0, (cqn >> 16).toByte, (cqn >> 8).toByte, cqn.toByte))
        case r if r < 76 => MmioWrite.of(pageBase((page + 1) % pages) + bf, sendBytes(qpn, idx))            // not the owner's page
        case r if r < 80 => MmioWrite.of(pageBase(page) + 0x100 + 8 * rnd.nextInt(32), sendBytes(qpn, idx)) // no register there
        case r if r < 84 => MmioWrite.of(pageBase(page) + bf, sendBytes(qpn, idx).take(4))                 // 4-byte write
        case r if r < 88 => MmioWrite.of(cfg.windowBase() - 8 - 8 * rnd.nextInt(8), sendBytes(qpn, idx))  // below the window
        case r if r < 92 => MmioWrite.of(pageBase(page) + bf, sendBytes(0xABC000L + rnd.nextInt(4096), idx)) // no such queue
        case _ => MmioWrite.of(pageBase(page) + bf, sendBytes(qps(0), idx))                                  // hot queue: coalescing
      }
    }
  }

  /** Runs both twins; returns counts of what happened. Throws on the first divergence, naming cycle and port. */
  def lockstep(cycles: Int, seed: Long, twinCfg: JDecoder.Config = cfg): Map[String, Long] = {
    val seen = mutable.Map[String, Long]().withDefaultValue(0L)
    compiled.doSim(s"lockstep_$seed", seed.toInt) { dut =>
      val stim = new Stimulus(seed)
      val jsim = new Simulator()
      val core = jsim.clockDomain("core", 4000)
      val twin = new JDecoder(core, twinCfg)
      var mmio: MmioWrite = null
      var table: QueueTableWrite = null
      var ready = false
      core.add(new Clocked {
        override def drive(): Unit = {
          if (mmio != null) twin.mmio().push(mmio) else twin.mmio().idle()
          if (table != null) twin.tableWrite().push(table) else twin.tableWrite().idle()
          twin.doorbell().ready(ready)
        }
        override def update(): Unit = ()
        override def active(): Boolean = false
      })
      dut.io.mmio.valid #= false
      dut.io.tableWrite.valid #= false
      dut.io.doorbell.ready #= false
      dut.clockDomain.forkStimulus(10)
      dut.clockDomain.waitSampling(5)
      sleep(1)
      for (cycle <- 0 until cycles) {
        // bursts and idle stretches, so the FIFO both overflows and drains
        val busy = (cycle / 500) % 3 != 2
        mmio = if (busy && stim.rnd.nextInt(100) < 70) stim.mmio() else null
        table = if (stim.setup.nonEmpty) stim.setup.dequeue() else if (stim.rnd.nextInt(100) < 3) stim.tableWrite() else null
        ready = stim.rnd.nextInt(100) < (if (busy) 30 else 90)
        dut.io.mmio.valid #= mmio != null
        if (mmio != null) LayoutSim.write(dut.io.mmio.payload, MmioWrite.LAYOUT, mmio)
        dut.io.tableWrite.valid #= table != null
        if (table != null) LayoutSim.write(dut.io.tableWrite.payload, QueueTableWrite.LAYOUT, table)
        dut.io.doorbell.ready #= ready
        sleep(1)

        val rtlDbValid = dut.io.doorbell.valid.toBoolean
        val rtlDb = if (rtlDbValid) LayoutSim.read(dut.io.doorbell.payload, DoorbellMsg.LAYOUT) else null
        val rtlErrValid = dut.io.error.valid.toBoolean
        val rtlErr = if (rtlErrValid) LayoutSim.read(dut.io.error.payload, DoorbellError.LAYOUT) else null
        val rtlCounters = Seq(dut.io.seen, dut.io.coalesced, dut.io.overflowed, dut.io.rejected).map(_.toLong)
        val rtlOcc = dut.io.occupancy.toInt
        val javaCounters = Seq(twin.seen(), twin.coalesced(), twin.overflowed(), twin.rejected())
        val javaOcc = twin.occupancy()

        core.wake()
        jsim.runUntil(core.picosOfCycle(cycle))
        def check(port: String, java: Any, rtl: Any): Unit =
          if (java != rtl) fail(s"divergence at cycle $cycle (seed $seed), port $port: Java twin $java, RTL $rtl")
        check("io_doorbell_valid", twin.doorbell().valid(), rtlDbValid)
        if (rtlDbValid) check("io_doorbell_payload", twin.doorbell().payload(), rtlDb)
        check("io_error_valid", twin.error().valid(), rtlErrValid)
        if (rtlErrValid) check("io_error_payload", twin.error().payload(), rtlErr)
        for ((name, i) <- Seq("io_seen", "io_coalesced", "io_overflowed", "io_rejected").zipWithIndex) check(name, javaCounters(i), rtlCounters(i))
        check("io_occupancy", javaOcc, rtlOcc)

        if (rtlDbValid && ready) seen("delivered") += 1
        if (rtlErrValid) seen(rtlErr.reason().name()) += 1
        dut.clockDomain.waitSampling()
        sleep(1)
      }
      seen("coalesced") = twin.coalesced()
    }
    seen.toMap
  }

  test("DoorbellDecoder RTL and Java twin agree for 100,000 cycles of mixed doorbells, errors and back-pressure") {
    val n = lockstep(100000, 7)
    // the stimulus must have exercised every path, or agreement proves little
    assert(n("delivered") > 10000, n)
    assert(n("coalesced") > 1000, n)
    for (c <- DoorbellError.Code.values().drop(1)) assert(n.getOrElse(c.name(), 0L) > 50, s"$c seen ${n.getOrElse(c.name(), 0L)} times: $n")
  }

  test("a timing bug injected into the Java twin (one FIFO entry fewer) is caught with cycle and port") {
    val buggy = new JDecoder.Config(cfg.windowBase(), cfg.windowSize(), cfg.pageSize(), cfg.bfRegSize(), cfg.fifoDepth() - 1, cfg.tableEntries())
    val e = intercept[Throwable](lockstep(20000, 11, buggy))
    val msg = e.getMessage
    info(msg)
    assert(msg.contains("divergence at cycle") && msg.contains("(seed 11)") && msg.contains("port io_"), msg)
  }
}
