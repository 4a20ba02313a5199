package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import nicsim.driver.World;
import nicsim.fabric.Faults;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** Shared receive queues: many QPs taking from one ring, the limit event, and no flush on error. */
class SrqTest {
    static final class Setup {
        final World w = new World(2, Profiles.load("cx-gen3x16"), 1, Faults.NONE);
        final Context sc = new Device(w.host(1)).open(), cc = new Device(w.host(0)).open();
        final ProtectionDomain spd = sc.allocPd(), cpd = cc.allocPd();
        final CompletionQueue scq = sc.createCq(256), ccq = cc.createCq(256);
        final SharedReceiveQueue srq;
        final HostBuffer sbuf = new ProcessMemory(w.host(1)).alloc(1 << 16);
        final HostBuffer cbuf = new ProcessMemory(w.host(0)).alloc(4096);
        final MemoryRegion smr = spd.regMr(sbuf, Connect.ALL_REMOTE), cmr = cpd.regMr(cbuf, Connect.ALL_REMOTE);
        final List<QueuePair> server = new ArrayList<>(), client = new ArrayList<>();

        Setup(int qps, int srqWr, int limit) {
            srq = spd.createSrq(new SrqInitAttr().maxWr(srqWr).maxSge(1).srqLimit(limit));
            for (int i = 0; i < qps; i++) {
                QueuePair s = spd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(scq).recvCq(scq).srq(srq)
                        .maxSendWr(4));
                QueuePair c = cpd.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(ccq).recvCq(ccq)
                        .maxSendWr(16).maxRecvWr(1));
                Connect.up(s, Connect.ALL_REMOTE, Connect.Dest.of(cc, c, 10), Mtu.MTU_1024, 20);
                Connect.up(c, Connect.ALL_REMOTE, Connect.Dest.of(sc, s, 20), Mtu.MTU_1024, 10);
                server.add(s);
                client.add(c);
            }
        }

        void post(int n, int from) {
            for (int i = 0; i < n; i++) {
                long at = sbuf.addr() + 256L * ((from + i) % 200);
                srq.postRecv(new RecvWr().wrId(from + i).sgList(new Sge(at, 256, smr.lkey())));
            }
        }

        void send(QueuePair c, int id, byte tag) {
            cbuf.write(0, new byte[]{tag, tag, tag});
            c.postSend(Wrs.signaled(id, WrOpcode.SEND).sgList(new Sge(cbuf.addr(), 3, cmr.lkey())));
        }

        List<WorkCompletion> await(CompletionQueue cq, int n) {
            return Completions.await(w, cq, n);
        }
    }

    @Test
    void manyQpsTakeFromOneSrqInOrder() {
        Setup s = new Setup(4, 64, 0);
        s.post(16, 0);
        for (int i = 0; i < 16; i++) {
            s.send(s.client.get(i % 4), i, (byte) i);
            s.await(s.ccq, 1);
        }
        List<WorkCompletion> r = s.await(s.scq, 16);
        Set<Integer> qpsSeen = new HashSet<>();
        for (int i = 0; i < 16; i++) {
            assertEquals(WcStatus.SUCCESS, r.get(i).status(), r.get(i).toString());
            assertEquals(i, r.get(i).wrId(), "WQEs are taken in order whichever QP the message came to");
            assertEquals(s.server.get(i % 4).qpNum(), r.get(i).qpNum());
            qpsSeen.add(r.get(i).qpNum());
            assertArrayEquals(new byte[]{(byte) i, (byte) i, (byte) i}, s.sbuf.read(256L * i, 3));
        }
        assertEquals(4, qpsSeen.size());
        VerbsException e = assertThrows(VerbsException.class, () -> s.server.get(0).postRecv(new RecvWr()));
        assertEquals(Errno.EINVAL, e.errno());
    }

    @Test
    void sixteenQpsSendingAtOnceAllLandThroughOneSrq() {
        // ibv_srq_pingpong's shape: every client QP sends at the same time, the SRQ's WQEs are taken concurrently
        Setup s = new Setup(16, 64, 0);
        s.post(32, 0);
        for (int i = 0; i < 16; i++) s.send(s.client.get(i), i, (byte) i);
        List<WorkCompletion> sent = s.await(s.ccq, 16);
        for (WorkCompletion w : sent) assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
        List<WorkCompletion> r = s.await(s.scq, 16);
        Set<Integer> qpsSeen = new HashSet<>();
        for (WorkCompletion w : r) {
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            qpsSeen.add(w.qpNum());
        }
        assertEquals(16, qpsSeen.size());
    }

    @Test
    void theLimitFiresOnceAndAgainOnlyWhenRearmed() {
        Setup s = new Setup(1, 32, 4);
        s.post(6, 0);
        List<EventType> events = new ArrayList<>();
        Runnable drain = () -> {
            s.w.runFor(10_000_000); // events land in the event queue shortly after the completion
            for (Optional<AsyncEvent> e = s.sc.pollAsyncEvent(); e.isPresent(); e = s.sc.pollAsyncEvent())
                events.add(e.get().type());
        };
        for (int i = 0; i < 3; i++) { s.send(s.client.get(0), i, (byte) 1); s.await(s.scq, 1); }
        drain.run();
        assertEquals(List.of(EventType.SRQ_LIMIT_REACHED), events, "fired when 3 of 6 were left (< 4)");
        s.send(s.client.get(0), 3, (byte) 1);
        s.await(s.scq, 1);
        drain.run();
        assertEquals(1, events.size(), "disarmed after firing");
        assertEquals(0, s.srq.limit(), "ibv_query_srq reads the disarmed limit as 0");
        s.srq.modify(new SrqAttr().srqLimit(3), SrqAttrMask.LIMIT);
        s.send(s.client.get(0), 4, (byte) 1);
        s.await(s.scq, 1);
        drain.run();
        assertEquals(List.of(EventType.SRQ_LIMIT_REACHED, EventType.SRQ_LIMIT_REACHED), events);
        assertThrows(VerbsException.class, () -> s.srq.modify(new SrqAttr().srqLimit(99), SrqAttrMask.LIMIT));
        VerbsException resize = assertThrows(VerbsException.class,
                () -> s.srq.modify(new SrqAttr().maxWr(32), SrqAttrMask.MAX_WR));
        assertEquals(Errno.EINVAL, resize.errno(), "resizing an SRQ is EINVAL, as on mlx5");
    }

    @Test
    void anSrqQpInErrIsNotFlushedButHearsLastWqeReached() {
        Setup s = new Setup(2, 16, 0);
        s.post(4, 0);
        s.server.get(0).modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
        s.w.runFor(100_000_000);
        assertTrue(s.scq.poll(8).isEmpty(), "the SRQ's WQEs are not flushed");
        assertEquals(EventType.QP_LAST_WQE_REACHED, s.sc.pollAsyncEvent().orElseThrow().type());
        // the other QP still takes them
        s.send(s.client.get(1), 1, (byte) 9);
        assertEquals(0, s.await(s.scq, 1).get(0).wrId());
        VerbsException e = assertThrows(VerbsException.class, s.srq::close);
        assertEquals(Errno.EBUSY, e.errno(), "still used by QPs");
    }
}
