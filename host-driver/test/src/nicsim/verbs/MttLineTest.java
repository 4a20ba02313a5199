package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Random;
import nicsim.fabric.Faults;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/**
 * A translation miss reads its whole cache line of the MTT table (mtt.fill.line): the MR's
 * neighbouring entries in it come along and answer the misses that follow without a PCIe read.
 * The walker misses as often either way; the reads, and the time, go down. Bytes checked.
 */
class MttLineTest {
    record Run(long misses, long tableReads, long lineHits, long picos) {}

    /** A 2 MiB RDMA WRITE between MRs of 4 KiB pages: every page a translation the walker has not seen. */
    static Run write(Profile profile) {
        int size = 2 << 20;
        Pair p = new Pair(profile, QpType.RC, size, Faults.NONE, 1, Pair.defaults()).up(Mtu.MTU_4096);
        byte[] data = new byte[size];
        new Random(11).nextBytes(data);
        p.a.buf.write(0, data);
        var c = p.world.sim.counters();
        long misses = c.get("MttWalker.cache_misses"), reads = c.get("Firmware.xlate_table_reads");
        long hits = c.get("Firmware.xlate_line_hits"), t0 = p.world.now();
        p.a.qp.postSend(Wrs.signaled(1, WrOpcode.RDMA_WRITE)
                .sgList(new Sge(p.a.buf.addr(), size, p.a.mr.lkey())).remoteAddr(p.b.buf.addr()).rkey(p.b.mr.rkey()));
        List<WorkCompletion> wc = p.await(p.a.cq, 1);
        assertEquals(WcStatus.SUCCESS, wc.get(0).status(), wc.toString());
        assertArrayEquals(data, p.b.buf.read(0, size), "every byte arrived");
        return new Run(c.get("MttWalker.cache_misses") - misses, c.get("Firmware.xlate_table_reads") - reads,
                c.get("Firmware.xlate_line_hits") - hits, p.world.now() - t0);
    }

    @Test
    void aMissReadsItsLineAndTheNeighboursSpareTheirReads() {
        Profile pages4k = Profiles.load("cx-gen3x16").with("mtt.page.max", "4 KiB");
        Run line = write(pages4k), entry = write(pages4k.with("mtt.fill.line", "8 B"));
        assertTrue(line.misses() >= 2 * 512, "both sides miss on every page: " + line);
        assertEquals(entry.misses(), line.misses(), "the walker misses as often either way");
        assertEquals(entry.misses(), entry.tableReads(), "one entry per read: " + entry);
        assertEquals(0, entry.lineHits());
        assertEquals(line.misses(), line.tableReads() + line.lineHits(), "every miss is a read or a line hit: " + line);
        assertTrue(line.tableReads() * 7 <= line.misses(), "about one read per 8 entries: " + line);
        assertTrue(line.picos() < entry.picos(),
                "fewer PCIe reads in the walk: " + line.picos() + " ps against " + entry.picos());
    }

    @Test
    void aLineLongerThanAllowedIsNamed() {
        Profile bad = Profiles.load("cx-gen3x16").with("mtt.fill.line", "96 B");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Pair(bad, QpType.RC, 4096, Faults.NONE, 1, Pair.defaults()));
        assertEquals("mtt.fill.line = 96 B: must be a power of two from 8 B to 4096 B", e.getMessage());
    }
}
