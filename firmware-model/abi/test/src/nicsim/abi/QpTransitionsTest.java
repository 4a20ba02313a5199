package nicsim.abi;

import static nicsim.abi.QpModifyMask.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every transition x QP type, legal and illegal, against docs/sources.md#qp-state-transitions. */
class QpTransitionsTest {
    static final QpcState RESET = QpcState.RESET, INIT = QpcState.INIT, RTR = QpcState.RTR, RTS = QpcState.RTS,
            SQD = QpcState.SQD, SQE = QpcState.SQE, ERR = QpcState.ERR;
    static final ServiceType DRIVER = ServiceType.DRIVER;

    /** docs/sources.md#qp-state-transitions: the only valid pairs of the 7x7 matrix. */
    static final Map<QpcState, Set<QpcState>> VALID = Map.of(
            RESET, EnumSet.of(RESET, INIT),
            INIT, EnumSet.of(RESET, INIT, RTR, ERR),
            RTR, EnumSet.of(RESET, RTS, ERR),
            RTS, EnumSet.of(RESET, RTS, SQD, ERR),
            SQD, EnumSet.of(RESET, RTS, SQD, ERR),
            SQE, EnumSet.of(RESET, RTS, ERR),
            ERR, EnumSet.of(RESET, ERR));

    @Test
    void theValidPairsAreExactlyTheKernelTable() {
        for (QpcState cur : QpcState.values())
            for (QpcState next : QpcState.values())
                assertEquals(VALID.get(cur).contains(next), QpTransitions.valid(cur, next), cur + " -> " + next);
    }

    @Test
    void masksMatchTheReferenceHexValues() {
        assertEquals(0x38, QpTransitions.required(RESET, INIT, ServiceType.RC));
        assertEquals(0x70, QpTransitions.required(RESET, INIT, ServiceType.UD));
        assertEquals(0x129180, QpTransitions.required(INIT, RTR, ServiceType.RC));
        assertEquals(0x4018, QpTransitions.optional(INIT, RTR, ServiceType.RC));
        assertEquals(0x101180, QpTransitions.required(INIT, RTR, ServiceType.UC));
        assertEquals(0x50, QpTransitions.optional(INIT, RTR, ServiceType.UD));
        assertEquals(0x12e00, QpTransitions.required(RTR, RTS, ServiceType.RC));
        assertEquals(0x4c00a, QpTransitions.optional(RTR, RTS, ServiceType.RC));
        assertEquals(0x4400a, QpTransitions.optional(RTR, RTS, ServiceType.UC));
        assertEquals(0x42, QpTransitions.optional(RTR, RTS, ServiceType.UD));
        assertEquals(0x12e00, QpTransitions.required(RTR, RTS, ServiceType.XRC_SEND));
        assertEquals(0x10200, QpTransitions.required(RTR, RTS, ServiceType.XRC_RECV));
        assertEquals(0x4, QpTransitions.optional(RTS, SQD, ServiceType.UD));
        assertEquals(0x6eeb8, QpTransitions.optional(SQD, SQD, ServiceType.RC));
        assertEquals(0x44098, QpTransitions.optional(SQD, SQD, ServiceType.UC));
        assertEquals(0x50, QpTransitions.optional(SQD, SQD, ServiceType.UD));
        assertEquals(0x46eb8, QpTransitions.optional(SQD, SQD, ServiceType.XRC_SEND));
        assertEquals(0x6c2b8, QpTransitions.optional(SQD, SQD, ServiceType.XRC_RECV));
        assertEquals(0xa, QpTransitions.optional(SQE, RTS, ServiceType.UC));
        assertEquals(0x0, QpTransitions.optional(SQE, RTS, ServiceType.RC));
    }

    /**
     * Every valid pair and type: required alone passes; each required bit missing, and each foreign bit, is refused by
     * name.
     */
    @Test
    void everyTransitionAndTypeChecksEachAttribute() {
        int checked = 0;
        for (ServiceType type : ServiceType.values())
            if (type != ServiceType.DRIVER) // a DRIVER QP is a DCI or a DCT: dcHalvesHaveTheirOwnRows
            for (QpcState cur : QpcState.values())
                for (QpcState next : QpcState.values()) {
                    if (!VALID.get(cur).contains(next)) {
                        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                                () -> QpTransitions.check(type, cur, STATE, next));
                        assertTrue(e.getMessage().contains(cur + " -> " + next), e.getMessage());
                        continue;
                    }
                    int req = QpTransitions.required(cur, next, type), opt = QpTransitions.optional(cur, next, type);
                    assertEquals(next, QpTransitions.check(type, cur, STATE | req, next),
                            type + " " + cur + "->" + next);
                    for (int b = 1; b <= DEST_QPN; b <<= 1) {
                        int bit = b;
                        if ((req & bit) != 0) {
                            QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                                    () -> QpTransitions.check(type, cur, (STATE | req) & ~bit, next));
                            assertTrue(e.getMessage().contains("missing: " + QpModifyMask.names(bit)), e.getMessage());
                        } else if ((opt & bit) != 0) {
                            assertEquals(next, QpTransitions.check(type, cur, STATE | req | bit, next));
                        } else if (bit != STATE) {
                            QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                                    () -> QpTransitions.check(type, cur, STATE | req | bit, next));
                            assertTrue(e.getMessage().contains(QpModifyMask.names(bit)),
                                    type + " " + cur + "->" + next + ": " + e.getMessage());
                        }
                        checked++;
                    }
                }
        assertTrue(checked > 2000, "checked " + checked);
    }

    @Test
    void curStateIsOnlyAcceptedInRtrRtsSqdOrSqe() {
        assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(ServiceType.RC, INIT, STATE | CUR_STATE, ERR));
        assertEquals(RTS, QpTransitions.check(ServiceType.RC, RTS, STATE | CUR_STATE, RTS));
        assertEquals(RTS, QpTransitions.check(ServiceType.UC, SQE, STATE | CUR_STATE | ACCESS_FLAGS, RTS));
    }

    /**
     * DC (mlx5's rows): a DCI reaches RTS naming no destination; a DCT stops at RTR; a DRIVER QP without a half is
     * refused.
     */
    @Test
    void dcHalvesHaveTheirOwnRows() {
        DcRole DCI = DcRole.DCI, DCT = DcRole.DCT;
        assertEquals(INIT, QpTransitions.check(DRIVER, DCI, RESET, STATE | PKEY_INDEX | PORT, INIT));
        assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(DRIVER, DCI, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT));
        assertEquals(INIT, QpTransitions.check(DRIVER, DCT, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT));
        assertEquals(RTR, QpTransitions.check(DRIVER, DCI, INIT, STATE | PATH_MTU | AV, RTR));
        QpTransitions.Rejected dest = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(DRIVER, DCI, INIT, STATE | PATH_MTU | DEST_QPN, RTR));
        assertTrue(dest.getMessage().contains("DCI does not accept DEST_QPN"), dest.getMessage());
        assertEquals(RTR, QpTransitions.check(DRIVER, DCT, INIT, STATE | PATH_MTU | MIN_RNR_TIMER, RTR));
        assertEquals(RTS, QpTransitions.check(DRIVER, DCI, RTR,
                STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, RTS));
        QpTransitions.Rejected rts = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(DRIVER, DCT, RTR, STATE | SQ_PSN, RTS));
        assertTrue(rts.getMessage().contains("DCT"), rts.getMessage());
        assertFalse(QpTransitions.valid(RTR, RTS, DRIVER, DCT));
        assertTrue(QpTransitions.valid(RTR, ERR, DRIVER, DCT));
        assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(DRIVER, null, RESET, STATE | PKEY_INDEX | PORT, INIT));
    }

    @Test
    void withoutStateTheQpStaysWhereItIs() {
        assertEquals(RTS, QpTransitions.check(ServiceType.RC, RTS, ACCESS_FLAGS | MIN_RNR_TIMER, null));
        assertEquals(SQD, QpTransitions.check(ServiceType.RC, SQD, TIMEOUT | RETRY_CNT, null));
        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(ServiceType.RC, RESET, PORT, null));
        assertTrue(e.getMessage().contains("RESET -> RESET") && e.getMessage().contains("PORT"), e.getMessage());
        assertThrows(QpTransitions.Rejected.class, () -> QpTransitions.check(ServiceType.UD, ERR, QKEY, null));
    }

    @Test
    void theUsualRcBringUpPasses() {
        QpcState s = QpTransitions.check(ServiceType.RC, RESET, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, INIT);
        s = QpTransitions.check(ServiceType.RC, s,
                STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER, RTR);
        s = QpTransitions.check(ServiceType.RC, s,
                STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, RTS);
        assertEquals(RTS, s);
        QpTransitions.Rejected e = assertThrows(QpTransitions.Rejected.class,
                () -> QpTransitions.check(ServiceType.RC, INIT, STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN, RTR));
        // in bit order
        assertTrue(e.getMessage().contains("missing: MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC"), e.getMessage());
    }
}
