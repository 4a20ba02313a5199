package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import nicsim.abi.QpTransitions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every (from, to) pair of QP states for RC, UC and UD, through the verbs API and the adapter: a
 * transition in the table, with its required attributes, lands in the target state (query agrees);
 * any other is EINVAL and the QP stays where it was. SQE is reached the way it happens, by a send
 * error on a UC or UD QP (an RC QP never enters SQE).
 */
class TransitionMatrixTest {
    private static QpAttr everything(Pair p, QpState to) {
        return new QpAttr().qpState(to).qpAccessFlags(Connect.ALL_REMOTE).qkey(Connect.QKEY).pathMtu(Mtu.MTU_1024)
                .destQpNum(p.b.qp.qpNum()).rqPsn(1).sqPsn(1).ahAttr(new AhAttr().dlid(p.b.ctx.queryPort(1).lid()))
                .timeout(14)
                .retryCnt(7).rnrRetry(7).minRnrTimer(12).maxRdAtomic(1).maxDestRdAtomic(1).portNum(1).pkeyIndex(0);
    }

    /** Brings A's QP to {@code s} by a legal path; false if the type cannot be in that state. */
    private static boolean reach(Pair p, QpType type, QpState s) {
        QueuePair qp = p.a.qp;
        if (s == QpState.RESET) return true;
        Connect.toInit(qp, Connect.ALL_REMOTE);
        if (s == QpState.ERR) { // the table has no RESET -> ERR
            qp.modify(new QpAttr().qpState(QpState.ERR), QpAttrMask.STATE);
            return true;
        }
        if (s == QpState.INIT) return true;
        Connect.toRtr(qp, Connect.Dest.of(p.b.ctx, p.b.qp, 1), Mtu.MTU_1024);
        if (s == QpState.RTR) return true;
        Connect.toRts(qp, 1);
        if (s == QpState.RTS) return true;
        if (s == QpState.SQD) {
            qp.modify(new QpAttr().qpState(QpState.SQD), QpAttrMask.STATE);
            return true;
        }
        // SQE: a send with a bad lkey on UC/UD
        if (type == QpType.RC) return false;
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .sgList(new Sge(p.a.buf.addr(), 8, p.a.mr.lkey() ^ 0x10));
        if (type == QpType.UD) wr.ah(p.a.pd.createAh(new AhAttr().dlid(p.b.ctx.queryPort(1).lid())))
                .remoteQpn(p.b.qp.qpNum()).remoteQkey(Connect.QKEY);
        qp.postSend(wr);
        WorkCompletion wc = p.await(p.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_PROT_ERR, wc.status(), wc.toString());
        assertEquals(QpState.SQE, qp.query().qpState());
        return true;
    }

    @ParameterizedTest
    @EnumSource(value = QpType.class, names = {"RC", "UC", "UD"})
    void everyPairOfStates(QpType type) {
        List<String> wrong = new ArrayList<>();
        int legal = 0, illegal = 0;
        for (QpState from : QpState.values())
            for (QpState to : QpState.values()) {
                Pair p = new Pair("cx-gen3x16", type, 4096);
                if (!reach(p, type, from)) continue;
                QueuePair qp = p.a.qp;
                int req;
                try {
                    req = DeviceCodes.maskUp(QpTransitions.required(DeviceCodes.device(from), DeviceCodes.device(to),
                            DeviceCodes.device(type)));
                } catch (QpTransitions.Rejected r) {
                    req = -1;
                }
                if (req >= 0 && QpTransitions.valid(DeviceCodes.device(from), DeviceCodes.device(to))) {
                    legal++;
                    try {
                        qp.modify(everything(p, to), QpAttrMask.STATE | req);
                        if (qp.query().qpState() != to)
                            wrong.add(from + "->" + to + " ended in " + qp.query().qpState());
                    } catch (VerbsException e) {
                        wrong.add(from + "->" + to + " refused: " + e.getMessage());
                    }
                } else {
                    illegal++;
                    VerbsException e = assertThrows(VerbsException.class,
                            () -> qp.modify(everything(p, to), QpAttrMask.STATE), from + "->" + to);
                    if (e.errno() != Errno.EINVAL) wrong.add(from + "->" + to + ": errno " + e.errno());
                    if (qp.query().qpState() != from)
                        wrong.add(from + "->" + to + " moved the QP to " + qp.query().qpState());
                }
            }
        assertTrue(wrong.isEmpty(), type + ": " + wrong);
        assertTrue(legal >= 17, "legal transitions tried: " + legal);
        assertTrue(illegal >= 20, "illegal transitions tried: " + illegal);
    }
}
