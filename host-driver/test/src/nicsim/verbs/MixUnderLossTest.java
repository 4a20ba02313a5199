package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Random mixes of WRITE, READ, SEND and atomics under injected loss, duplication, reordering and
 * corruption: every operation completes successfully and host memory on both sides ends exactly as
 * a loss-free model of the same operations says (each byte once, in order; atomics applied once).
 */
class MixUnderLossTest {
    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {"cx-gen3x16; 11; drop=0.03,dup=0.02,reorder=0.03,corrupt=0.01",
            "lanai72; 12; drop=0.02,reorder=0.02", "cx-gen3x16; 13; none"})
    void randomMixEndsByteForByteAsWithoutLoss(String profile, long seed, String faults) {
        int region = 1 << 16;
        Pair p = new Pair(Profiles.load(profile).with("fw.ack.coalesce", "4"), QpType.RC, 4 * region,
                Faults.parse(faults), seed, Pair.defaults());
        p.up(Mtu.MTU_1024);
        Random rnd = new Random(seed);
        // model of both buffers: A [0, region) source, [region, 2 region) read landing, [3 region, +8) atomic results
        byte[] a = new byte[4 * region], b = new byte[4 * region];
        rnd.nextBytes(a);
        rnd.nextBytes(b);
        Arrays.fill(b, 3 * region, 3 * region + 8, (byte) 0);
        p.a.buf.write(0, a);
        p.b.buf.write(0, b);
        long counter = 0;
        List<Long> expectFetched = new ArrayList<>();
        int ops = 60, recvs = 0;
        for (int i = 0; i < ops; i++) {
            int kind = rnd.nextInt(4);
            int len = 1 + rnd.nextInt(6000);
            int off = rnd.nextInt(region - len);
            SendWr wr = new SendWr().wrId(i).sendFlags(SendFlags.SIGNALED);
            switch (kind) {
                case 0 -> { // WRITE A[off] -> B[region + off]
                    wr.opcode(WrOpcode.RDMA_WRITE).sgList(new Sge(p.a.buf.addr() + off, len, p.a.mr.lkey()))
                            .remoteAddr(p.b.buf.addr() + region + off).rkey(p.b.mr.rkey());
                    System.arraycopy(a, off, b, region + off, len);
                }
                case 1 -> { // READ B[off] -> A[region + off]
                    wr.opcode(WrOpcode.RDMA_READ).sgList(new Sge(p.a.buf.addr() + region + off, len, p.a.mr.lkey()))
                            .remoteAddr(p.b.buf.addr() + off).rkey(p.b.mr.rkey());
                    System.arraycopy(b, off, a, region + off, len);
                }
                case 2 -> { // SEND A[off] -> B[2 region ...] (one receive per send, each at its own place)
                    int at = 2 * region + (recvs % 8) * 8192;
                    len = Math.min(len, 8192);
                    p.b.qp.postRecv(new RecvWr().wrId(1000 + i)
                            .sgList(new Sge(p.b.buf.addr() + at, 8192, p.b.mr.lkey())));
                    recvs++;
                    wr.opcode(WrOpcode.SEND).sgList(new Sge(p.a.buf.addr() + off, len, p.a.mr.lkey()));
                    System.arraycopy(a, off, b, at, len);
                }
                default -> { // fetch-and-add on B[3 region]
                    long add = 1 + rnd.nextInt(1000);
                    int slot = 3 * region + 16 + 8 * (i % 64);
                    wr.opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).compareAdd(add)
                            .sgList(new Sge(p.a.buf.addr() + slot, 8, p.a.mr.lkey()))
                            .remoteAddr(p.b.buf.addr() + 3 * region).rkey(p.b.mr.rkey());
                    ByteBuffer.wrap(a, slot, 8).order(ByteOrder.LITTLE_ENDIAN).putLong(counter);
                    counter += add;
                    ByteBuffer.wrap(b, 3 * region, 8).order(ByteOrder.LITTLE_ENDIAN).putLong(counter);
                    expectFetched.add(counter - add);
                }
            }
            p.a.qp.postSend(wr);
            // keep a handful outstanding
            if (i % 8 == 7 || i == ops - 1) {
                int n = i % 8 + 1;
                for (WorkCompletion wc : p.await(p.a.cq, n)) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
        }
        List<WorkCompletion> r = p.await(p.b.cq, recvs);
        for (WorkCompletion wc : r) assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertArrayEquals(b, p.b.buf.read(0, b.length), "B's memory");
        assertArrayEquals(a, p.a.buf.read(0, a.length), "A's memory");
        if (!faults.equals("none")) {
            assertTrue(p.world.sim.counters().get("Fabric.dropped") > 0, "faults were injected");
            assertTrue(p.world.sim.counters().get("Firmware.retransmits") > 0, "and recovered from");
        }
    }
}
