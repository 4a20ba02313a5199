package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import nicsim.verbs.AccessFlags;
import nicsim.verbs.CompletionQueue;
import nicsim.verbs.Connect;
import nicsim.verbs.Context;
import nicsim.verbs.Device;
import nicsim.verbs.HostBuffer;
import nicsim.verbs.MemoryRegion;
import nicsim.verbs.Mkey;
import nicsim.verbs.MrInterleaved;
import nicsim.verbs.Mtu;
import nicsim.verbs.ProcessMemory;
import nicsim.verbs.ProtectionDomain;
import nicsim.verbs.QpInitAttr;
import nicsim.verbs.QueuePair;
import nicsim.verbs.RecvWr;
import nicsim.verbs.SendFlags;
import nicsim.verbs.SendWr;
import nicsim.verbs.Sge;
import nicsim.verbs.WcStatus;
import nicsim.verbs.WorkCompletion;
import nicsim.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

/**
 * The MttWalker's newer paths with node 0's walker from Verilated RTL in lockstep, every edge
 * compared: the KLM walk of indirect mkeys (an interleaved column written and read remotely, a list
 * gathered for a SEND) and page faults of an on-demand region. The run gives the bytes, completions,
 * picoseconds and counters of the model alone.
 */
class MttFeaturesRtlTest {
    /**
     * What a run ends with: node 0's matrix and on-demand region, node 1's received and read-back bytes, the time, the
     * counters.
     */
    record Outcome(List<byte[]> bytes, long picos, Map<String, Long> counters, long rtlEdges) {}

    static Outcome run(Set<String> rtl) {
        try (Cluster c = Cluster.builder().nodes(2).profile("cx-gen3x16").seed(4).rtl(rtl).build()) {
            var w = c.world();
            Context c0 = new Device(w.host(0)).open(), c1 = new Device(w.host(1)).open();
            ProtectionDomain pd0 = c0.allocPd(), pd1 = c1.allocPd();
            CompletionQueue cq0 = c0.createCq(32), cq1 = c1.createCq(32);
            QueuePair q0 = pd0.createQp(new QpInitAttr().sendCq(cq0).recvCq(cq0).maxSendWr(16).maxRecvWr(16));
            QueuePair q1 = pd1.createQp(new QpInitAttr().sendCq(cq1).recvCq(cq1).maxSendWr(16).maxRecvWr(16));
            Connect.up(q0, Connect.ALL_REMOTE, Connect.Dest.of(c1, q1, 7), Mtu.MTU_1024, 5);
            Connect.up(q1, Connect.ALL_REMOTE, Connect.Dest.of(c0, q0, 5), Mtu.MTU_1024, 7);
            int rows = 48, row = 96, col = 40, colBytes = 24;
            ProcessMemory p0 = new ProcessMemory(w.host(0)), p1 = new ProcessMemory(w.host(1));
            HostBuffer matrix = p0.alloc(rows * row), a = p0.alloc(4096), b = p0.alloc(4096), odp = p0.alloc(16384);
            HostBuffer out = p1.alloc(32768), back = p1.alloc(4096), in = p1.alloc(4096);
            byte[] initial = new byte[rows * row];
            for (int i = 0; i < initial.length; i++) initial[i] = (byte) (i * 5);
            matrix.write(0, initial);
            a.write(0, "indirect ".getBytes());
            b.write(0, "gather".getBytes());
            byte[] pattern = new byte[32768];
            for (int i = 0; i < pattern.length; i++) pattern[i] = (byte) (i * 11 + 3);
            out.write(0, pattern);
            MemoryRegion mm = pd0.regMr(matrix, Connect.ALL_REMOTE), am = pd0.regMr(a, AccessFlags.LOCAL_WRITE),
                    bm = pd0.regMr(b, AccessFlags.LOCAL_WRITE);
            MemoryRegion om = pd0.regMr(odp, Connect.ALL_REMOTE | AccessFlags.ON_DEMAND);
            MemoryRegion outm = pd1.regMr(out, AccessFlags.LOCAL_WRITE);
            MemoryRegion backm = pd1.regMr(back, AccessFlags.LOCAL_WRITE), inm = pd1.regMr(in, AccessFlags.LOCAL_WRITE);
            Mkey column = pd0.createIndirectMkey(2), list = pd0.createIndirectMkey(2);
            MrInterleaved stripe = new MrInterleaved(matrix.addr() + col, colBytes, row - colBytes, mm.lkey());
            q0.postSend(new SendWr().wrId(1).sendFlags(SendFlags.SIGNALED)
                    .mrInterleaved(column, Connect.ALL_REMOTE, rows, stripe));
            q0.postSend(new SendWr().wrId(2).sendFlags(SendFlags.SIGNALED).mrList(list, AccessFlags.LOCAL_WRITE,
                    new Sge(a.addr(), 9, am.lkey()), new Sge(b.addr(), 6, bm.lkey())));
            await(c, cq0, 2);
            // node 1: the column written and read back through one rkey; 16 KiB into node 0's on-demand region
            q1.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).remoteAddr(0)
                    .rkey(column.rkey()).sgList(new Sge(out.addr(), rows * colBytes, outm.lkey())));
            q1.postSend(new SendWr().wrId(4).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED).remoteAddr(0)
                    .rkey(column.rkey()).sgList(new Sge(back.addr(), rows * colBytes, backm.lkey())));
            q1.postSend(new SendWr().wrId(5).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .remoteAddr(odp.addr()).rkey(om.rkey()).sgList(new Sge(out.addr(), 16384, outm.lkey())));
            q1.postRecv(new RecvWr().wrId(6).sgList(new Sge(in.addr(), 4096, inm.lkey())));
            await(c, cq1, 3);
            q0.postSend(new SendWr().wrId(7).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(0, 15, list.lkey())));
            await(c, cq0, 1);
            await(c, cq1, 1);
            c.checkRtl();
            long edges = c.rtlEdges().values().stream().mapToLong(Long::longValue).sum();
            List<byte[]> bytes = List.of(matrix.read(0, rows * row), odp.read(0, 16384), back.read(0, rows * colBytes),
                    in.read(0, 15));
            return new Outcome(bytes, w.now(), w.sim.counters().snapshot(), edges);
        }
    }

    static void await(Cluster c, CompletionQueue cq, int n) {
        List<WorkCompletion> got = new ArrayList<>();
        c.runUntil(() -> { got.addAll(cq.poll(n - got.size())); return got.size() >= n; }, 1_000_000_000_000L);
        assertEquals(n, got.size());
        for (WorkCompletion wc : got) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
    }

    @Test
    void indirectWalksAndPageFaultsMatchWithTheWalkerInRtl() {
        Outcome model = run(Set.of()), rtl = run(Set.of("mtt"));
        // the walker's clock stops while it waits for an MTT entry over PCIe: it runs a few hundred edges, not
        // thousands
        assertTrue(rtl.rtlEdges() > 300, "the RTL walker took part: " + rtl.rtlEdges() + " edges");
        assertEquals("indirect gather", new String(rtl.bytes().get(3)));
        byte[] m = rtl.bytes().get(0), back = rtl.bytes().get(2);
        for (int r = 0; r < 48; r++)
            for (int c = 0; c < 96; c++) {
                int at = r * 96 + c;
                byte want = c >= 40 && c < 64 ? (byte) ((r * 24 + c - 40) * 11 + 3) : (byte) (at * 5);
                assertEquals(want, m[at], "matrix row " + r + " byte " + c);
            }
        for (int i = 0; i < back.length; i++) assertEquals((byte) (i * 11 + 3), back[i], "read back byte " + i);
        assertTrue(rtl.counters().get("Firmware.odp_page_faults") >= 1,
                "the on-demand region faulted (one fault brings the WRITE's pages in)");
        for (int i = 0; i < model.bytes().size(); i++)
            assertArrayEquals(model.bytes().get(i), rtl.bytes().get(i), "bytes " + i);
        assertEquals(model.picos(), rtl.picos(), "the same picoseconds");
        assertEquals(model.counters(), rtl.counters(), "the same counters");
    }
}
