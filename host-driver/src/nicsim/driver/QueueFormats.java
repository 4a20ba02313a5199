package nicsim.driver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import nicsim.abi.Cqe64;
import nicsim.abi.DoorbellRecord;
import nicsim.abi.Eqe64;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;

/**
 * The queues' entries as the device's ABI classes declare them, field by field: each WQE segment, the CQE, the
 * EQE and the doorbell record. {@link DeviceHeader} gives every field to the C drivers as NICSIM_{prefix}{name}, and
 * {@link DeviceManual} lists them in docs/device.md, from this one list.
 */
final class QueueFormats {
    private QueueFormats() {}

    /** One entry or segment: its C name prefix, what it is, and its fields' byte offsets (and marks) by name. */
    record Format(String prefix, String what, Map<String, Integer> fields) {}

    /** The CQE's fields, as {@link Cqe64} names their byte offsets, in the entry's order. */
    static final List<String> CQE_FIELDS = List.of("TAG", "ERR_ADDR", "STRIDE", "PRIV", "ERR_KEY", "ERR_PSN", "SLID",
            "SRC_QP", "SRQN", "IMM", "ERR_PIECE", "APP", "APP_OP", "APP_INFO", "BYTE_CNT", "TIMESTAMP",
            "VENDOR_SYNDROME", "SYNDROME", "SOP_QPN", "WQE_COUNTER", "OP_OWN");

    static final List<Format> ALL = List.of(
            new Format("WQE_CTRL_SEG_", "a send WQE's control segment",
                    DeviceManual.constants(WqeLayout.class, "CTRL_")),
            new Format("WQE_XRC_SEG_", "the XRC segment (XRC QPs)", DeviceManual.constants(WqeFormat.class, "XRC_")),
            new Format("AV_", "the address vector (UD QPs, DC initiators): fields, size, the QPN's and GRH's bits",
                    DeviceManual.constants(WqeFormat.class, "AV_")),
            new Format("WQE_RADDR_SEG_", "the remote-address segment (RDMA, atomics, window binds)",
                    DeviceManual.constants(WqeFormat.class, "RADDR_")),
            new Format("WQE_ATOMIC_SEG_", "the atomic segment (atomics, window binds)",
                    DeviceManual.constants(WqeFormat.class, "ATOMIC_")),
            new Format("WQE_DATA_SEG_", "a data segment (send and receive WQEs)",
                    DeviceManual.constants(WqeFormat.class, "DATA_")),
            new Format("WQE_INLINE_SEG_", "the inline segment and its byte count's flag",
                    DeviceManual.constants(WqeFormat.class, "INLINE_")),
            new Format("WQE_UMR_SEG_", "a layout UMR's segment, after the control segment",
                    DeviceManual.constants(WqeFormat.class, "UMR_")),
            new Format("WQE_KLM_", "a layout UMR's entry", DeviceManual.constants(WqeFormat.class, "KLM_")),
            new Format("CQE_", "a CQE", named(Cqe64.class, CQE_FIELDS)),
            new Format("EQE_", "an EQE, and its owner byte's mark of a written entry",
                    DeviceManual.constants(Eqe64.class, "")),
            new Format("DBREC_", "a doorbell record: a QP's (or SRQ's) counters, a CQ's consumer counter and arm word",
                    DeviceManual.constants(DoorbellRecord.class, "")));

    /** The int constants {@code names} of {@code c}, in that order. */
    private static Map<String, Integer> named(Class<?> c, List<String> names) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (String n : names) m.put(n, DeviceHeader.field(c, n));
        return m;
    }
}
