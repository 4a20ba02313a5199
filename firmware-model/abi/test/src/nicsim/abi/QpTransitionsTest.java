package nicsim.abi;

import static nicsim.verbs.QpAttrMask.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import nicsim.verbs.QpAttrMask;
import nicsim.verbs.QpState;
import nicsim.verbs.DcType;
import nicsim.verbs.QpType;
import org.junit.jupiter.api.Test;

/** Every transition x QP type, legal and illegal, against docs/sources.md#qp-state-transitions. */
class QpTransitionsTest {
    static final QpState RESET = QpState.RESET, INIT = QpState.INIT, RTR = QpState.RTR, RTS = QpState.RTS, SQD = QpState.SQD,
            SQE = QpState.SQE, ERR = QpState.ERR;

    /** docs/sources.md#qp-state-transitions: the only valid pairs of the 7x7 matrix. */
    static final Map<QpState, Set<QpState>> VALID = Map.of(
            RESET, EnumSet.of(RESET, INIT),
            INIT, EnumSet.of(RESET, INIT, RTR, ERR),
            RTR, EnumSet.of(RESET, RTS, ERR),
            RTS, EnumSet.of(RESET, RTS, SQD, ERR),
            SQD, EnumSet.of(RESET, RTS, SQD, ERR),
            SQE, EnumSet.of(RESET, RTS, ERR),
            ERR, EnumSet.of(RESET, ERR));

    @Test
    void theValidPairsAreExactlyTheKernelTable() {
        for (QpState cur : QpState.values())
            for (QpState next : QpState.values())
                assertEquals(VALID.get(cur).contains(next), QpTransitions.valid(cur, next), cur + " -> " + next);
    }

    @Test
    void masksMatchTheReferenceHexValues() {
        assertEquals(0x38, QpTransitions.required(RESET, INIT, QpType.RC));
        assertEquals(0x70, QpTransitions.required(RESET, INIT, QpType.UD));
        assertEquals(0x129180, QpTransitions.required(INIT, RTR, QpType.RC));
        assertEquals(0x4018, QpTransitions.optional(INIT, RTR, QpType.RC));
        assertEquals(0x101180, QpTransitions.required(INIT, RTR, QpType.UC));
        assertEquals(0x50, QpTransitions.optional(INIT, RTR, QpType.UD));
        assertEquals(0x12e00, QpTransitions.required(RTR, RTS, QpType.RC));
        assertEquals(0x4c00a, QpTransitions.optional(RTR, RTS, QpType.RC));
        assertEquals(0x4400a, QpTransitions.optional(RTR, RTS, QpType.UC));
        assertEquals(0x42, QpTransitions.optional(RTR, RTS, QpType.UD));
        assertEquals(0x12e00, QpTransitions.required(RTR, RTS, QpType.XRC_SEND));
        assertEquals(0x10200, QpTransitions.required(RTR, RTS, QpType.XRC_RECV));
        assertEquals(0x4, QpTransitions.optional(RTS, SQD, QpType.UD));
        assertEquals(0x6eeb8, QpTransitions.optional(SQD, SQD, QpType.RC));
        assertEquals(0x44098, QpTransitions.optional(SQD, SQD, QpType.UC));
        assertEquals(0x50, QpTransitions.optional(SQD, SQD, QpType.UD));
        assertEquals(0x46eb8, QpTransitions.optional(SQD, SQD, QpType.XRC_SEND));
        assertEquals(0x6c2b8, QpTransitions.optional(SQD, SQD, QpType.XRC_RECV));
        assertEquals(0xa, QpTransitions.optional(SQE, RTS, QpType.UC));
        assertEquals(0x0, QpTransitions.optional(SQE, RTS, QpType.RC));
    }

    /**
     * Every valid pair and type: required alone passes; each required bit missing, and each foreign bit, is refused by
     * name.
     */
    @Test
    void everyTransitionAndTypeChecksEachAttribute() {
        int checked = 0;
        for (QpType type : QpType.values())
            if (type != QpType.DRIVER) // a DRIVER QP is a DCI or a DCT: dcHalvesHaveTheirOwnRows
            for (QpState cur : QpState.values())
                for (QpState next : QpState.values()) {
                    if (!VALID.get(cur).contains(next)) {
                        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(type, cur, STATE, next));
                        assertTrue(e.getMessage().contains(cur + " -> " + next), e.getMessage());
                        continue;
                    }
                    int req = QpTransitions.required(cur, next, type), opt = QpTransitions.optional(cur, next, type);
                    assertEquals(next, QpTransitions.check(type, cur, STATE | req, next), type + " " + cur + "->" + next);
                    for (int b = 1; b <= DEST_QPN; b <<= 1) {
                        int bit = b;
                        if ((req & bit) != 0) {
                            QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                                    () -> QpTransitions.check(type, cur, (STATE | req) & ~bit, next));
                            assertTrue(e.getMessage().contains("missing: " + QpAttrMask.names(bit)), e.getMessage());
                        } else if ((opt & bit) != 0) {
                            assertEquals(next, QpTransitions.check(type, cur, STATE | req | bit, next));
                        } else if (bit != STATE) {
                            QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                                    () -> QpTransitions.check(type, cur, STATE | req | bit, next));
                            assertTrue(e.getMessage().contains(QpAttrMask.names(bit)), type + " " + cur + "->" + next + ": " + e.getMessage());
                        }
                        checked++;
                    }
                }
        assertTrue(checked > 2000, "checked " + checked);
    }

    @Test
    void curStateIsOnlyAcceptedInRtrRtsSqdOrSqe() {
        assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.RC, INIT, STATE | CUR_STATE, ERR));
        assertEquals(RTS, QpTransitions.check(QpType.RC, RTS, STATE | CUR_STATE, RTS));
        assertEquals(RTS, QpTransitions.check(QpType.UC, SQE, STATE | CUR_STATE | ACCESS_FLAGS, RTS));
    }

    /**
     * DC (mlx5's rows): a DCI reaches RTS naming no destination; a DCT stops at RTR; a DRIVER QP without a half is
     * refused.
     */
    @Test
    void dcHalvesHaveTheirOwnRows() {
        DcType DCI = DcType.DCI, DCT = DcType.DCT;
        assertEquals(INIT, QpTransitions.check(QpType.DRIVER, DCI, RESET, STATE | PKEY_INDEX | PORT, INIT));
        assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.DRIVER, DCI, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT));
        assertEquals(INIT, QpTransitions.check(QpType.DRIVER, DCT, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT));
        assertEquals(RTR, QpTransitions.check(QpType.DRIVER, DCI, INIT, STATE | PATH_MTU | AV, RTR));
        QpTransitions.Rejected dest = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(QpType.DRIVER, DCI, INIT, STATE | PATH_MTU | DEST_QPN, RTR));
        assertTrue(dest.getMessage().contains("DCI does not accept DEST_QPN"), dest.getMessage());
        assertEquals(RTR, QpTransitions.check(QpType.DRIVER, DCT, INIT, STATE | PATH_MTU | MIN_RNR_TIMER, RTR));
        assertEquals(RTS, QpTransitions.check(QpType.DRIVER, DCI, RTR, STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, RTS));
        QpTransitions.Rejected rts = assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.DRIVER, DCT, RTR, STATE | SQ_PSN, RTS));
        assertTrue(rts.getMessage().contains("DCT"), rts.getMessage());
        assertFalse(QpTransitions.valid(RTR, RTS, QpType.DRIVER, DCT));
        assertTrue(QpTransitions.valid(RTR, ERR, QpType.DRIVER, DCT));
        assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.DRIVER, null, RESET, STATE | PKEY_INDEX | PORT, INIT));
    }

    @Test
    void withoutStateTheQpStaysWhereItIs() {
        assertEquals(RTS, QpTransitions.check(QpType.RC, RTS, ACCESS_FLAGS | MIN_RNR_TIMER, null));
        assertEquals(SQD, QpTransitions.check(QpType.RC, SQD, TIMEOUT | RETRY_CNT, null));
        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.RC, RESET, PORT, null));
        assertTrue(e.getMessage().contains("RESET -> RESET") && e.getMessage().contains("PORT"), e.getMessage());
        assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(QpType.UD, ERR, QKEY, null));
    }

    @Test
    void theUsualRcBringUpPasses() {
        QpState s = QpTransitions.check(QpType.RC, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT);
        s = QpTransitions.check(QpType.RC, s, STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER, RTR);
        s = QpTransitions.check(QpType.RC, s, STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, RTS);
        assertEquals(RTS, s);
        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(QpType.RC, INIT, STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN, RTR));
        assertTrue(e.getMessage().contains("missing: MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC"), e.getMessage()); // in bit order
    }
}
