package nicsim.cosim.example;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.cosim.Cluster;
import nicsim.cosim.Node;
import nicsim.verbs.*;
import org.junit.jupiter.api.Test;

/**
 * The example program of docs/verbs.md, as it is printed there: an RDMA WRITE between two nodes, checked byte for byte.
 */
class WriteExampleTest {
    @Test
    void theDocumentedExampleRuns() {
        // --- docs/verbs.md example begins
        try (Cluster cluster = Cluster.builder().nodes(2).profile("cx-gen3x16").seed(1).build()) {
            Node a = cluster.node(0), b = cluster.node(1);
            Context ca = a.devices().get(0).open(), cb = b.devices().get(0).open();
            ProtectionDomain pa = ca.allocPd(), pb = cb.allocPd();
            HostBuffer src = a.memory().alloc(4096), dst = b.memory().alloc(4096);
            MemoryRegion ma = pa.regMr(src, AccessFlags.LOCAL_WRITE);
            MemoryRegion mb = pb.regMr(dst, Connect.ALL_REMOTE);
            CompletionQueue cqa = ca.createCq(16), cqb = cb.createCq(16);
            QueuePair qa = pa.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cqa).recvCq(cqa)
                    .maxSendWr(16).maxRecvWr(16));
            QueuePair qb = pb.createQp(new QpInitAttr().qpType(QpType.RC).sendCq(cqb).recvCq(cqb)
                    .maxSendWr(16).maxRecvWr(16));
            // INIT, RTR, RTS with perftest's attributes; each side needs the other's LID, QPN and PSN
            Connect.up(qa, Connect.ALL_REMOTE, Connect.Dest.of(cb, qb, 200), Mtu.MTU_4096, 100);
            Connect.up(qb, Connect.ALL_REMOTE, Connect.Dest.of(ca, qa, 100), Mtu.MTU_4096, 200);

            src.write(0, "hello, nicsim".getBytes());
            qa.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sgList(new Sge(src.addr(), 13, ma.lkey())).remoteAddr(dst.addr()).rkey(mb.rkey()));
            List<WorkCompletion> wc = new ArrayList<>();
            // at most 1 ms of simulated time
            cluster.runUntil(() -> wc.addAll(cqa.poll(1)) && !wc.isEmpty(), 1_000_000_000L);
            System.out.println(wc.get(0).status() + " after " + cluster.nowPicos() + " ps: "
                    + new String(dst.read(0, 13)));   // SUCCESS after ... ps: hello, nicsim
            // --- docs/verbs.md example ends
            assertEquals(WcStatus.SUCCESS, wc.get(0).status());
            assertEquals("hello, nicsim", new String(dst.read(0, 13)));
        }
    }
}
