package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;
import nicsim.abi.Cmd;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * Translation-cache misses on lanai72 are filled by the host (docs/sources.md#kvia-translation): the
 * adapter interrupts, the driver's handler reads which MTT entry is missing and writes it in over
 * PCI. On the other profiles the adapter reads the entry by DMA.
 */
class TranslationFillTest {
    static final int PAGES = 6;

    /** One cold WRITE of {@code PAGES} pages; returns its time from post to completion, with bytes checked. */
    static long coldWrite(Pair p) {
        byte[] data = new byte[PAGES * 4096];
        new Random(3).nextBytes(data);
        p.a.buf.write(0, data);
        long t0 = p.world.now();
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), data.length, p.a.mr.lkey()))
                .remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, p.await(p.a.cq, 1).get(0).status());
        assertArrayEquals(data, p.b.buf.read(0, data.length));
        return p.world.now() - t0;
    }

    static long count(Pair p, String name) { return p.world.sim.counters().get(name); }

    @Test
    void lanai72MissesAreFilledByTheHostsInterruptHandler() {
        Pair p = new Pair("lanai72", QpType.RC, PAGES * 4096).up(Mtu.MTU_1024);
        long before = count(p, "MttWalker.cache_misses");
        coldWrite(p);
        long misses = count(p, "MttWalker.cache_misses") - before;
        assertTrue(misses >= 2 * PAGES, "both sides' pages miss once: " + misses);
        assertEquals(misses, count(p, "Firmware.xlate_host_interrupts"));
        assertEquals(misses, p.a.ctx.driver().translationFills() + p.b.ctx.driver().translationFills(),
                "every miss answered by a handler");
    }

    @Test
    void aHostFillCostsTheInterruptOnTopOfADmaRead() {
        Profile kvia = Profiles.load("lanai72");
        long byInterrupt = coldWrite(new Pair(kvia, QpType.RC, PAGES * 4096, Faults.NONE, 1, Pair.defaults())
                .up(Mtu.MTU_1024));
        Profile byDmaFill = kvia.with("mtt.fill", "\"dma\"");
        long byDma = coldWrite(new Pair(byDmaFill, QpType.RC, PAGES * 4096, Faults.NONE, 1, Pair.defaults())
                .up(Mtu.MTU_1024));
        // the requester's first page alone waits for one handler before its data can be read
        assertTrue(byInterrupt - byDma >= kvia.picos("host.interrupt.cost"),
                "interrupt " + byInterrupt + " ps, DMA " + byDma + " ps");
    }

    @Test
    void otherProfilesReadMissesByDma() {
        Pair p = new Pair("lanai43", QpType.RC, PAGES * 4096).up(Mtu.MTU_1024);
        coldWrite(p);
        assertTrue(count(p, "MttWalker.cache_misses") > 0);
        assertEquals(0, count(p, "Firmware.xlate_host_interrupts"));
    }

    @Test
    void aFillForAnEntryNobodyMissedIsRefusedAndChangesNothing() {
        Pair p = new Pair("lanai72", QpType.RC, PAGES * 4096).up(Mtu.MTU_1024);
        byte[] forged = new byte[16];
        forged[7] = 5; // MTT index 5, entry 0
        p.a.ctx.driver().mmio(Cmd.REG_XLATE_FILL, forged);
        p.world.runFor(1_000_000);
        assertEquals(1, count(p, "Firmware.xlate_fills_refused"));
        coldWrite(p); // translations still right
    }
}
