package nicsim.abi;

import java.util.List;
import nicsim.sim.Layout;

/**
 * Every command the adapter executes: its opcode, the layouts of its input and output mailboxes,
 * and what it does. One list for the driver's manual (docs/device.md) and the test that holds the
 * firmware to it: a command's input of any other length is BAD_INPUT_LENGTH, an opcode not here
 * BAD_OPCODE.
 */
public final class CmdTable {
    private CmdTable() {}

    /** A command: opcode, input and output layouts, and one sentence on what it does. */
    public record Command(int opcode, Layout<?> in, Layout<?> out, String does) {
        public String name() { return Cmd.opcodeName(opcode); }
    }

    private static Command c(int op, Layout<?> in, Layout<?> out, String does) {
        return new Command(op, in, out, does);
    }

    public static final List<Command> ALL = List.of(
            c(Cmd.QUERY_HCA_CAP, Cmd.EMPTY, Cmd.HCA_CAP,
                    "the adapter's limits, its port's LID, its subnet manager's LID and its GUID; "
                    + "may run before INIT_HCA"),
            c(Cmd.INIT_HCA, Cmd.INIT_HCA_IN, Cmd.EMPTY, "brings the adapter up, once: the async event queue (MSI-X "
                    + "vector 0), the MTT table, the QP and mkey context tables in host memory"),
            c(Cmd.TEARDOWN_HCA, Cmd.EMPTY, Cmd.EMPTY, "takes the adapter down once the driver has destroyed every "
                    + "object (OBJECTS_LEFT if not): INIT_HCA may run again, as when a driver is reloaded"),
            c(Cmd.ALLOC_UAR, Cmd.EMPTY, Cmd.HANDLE, "a UAR (doorbell) page of BAR0 for a context: its index"),
            c(Cmd.DEALLOC_UAR, Cmd.HANDLE, Cmd.EMPTY, "gives a UAR page back (UAR_IN_USE while a queue uses it)"),
            c(Cmd.ALLOC_PD, Cmd.EMPTY, Cmd.HANDLE, "a protection domain: its number"),
            c(Cmd.DEALLOC_PD, Cmd.HANDLE, Cmd.EMPTY, "frees a protection domain (PD_IN_USE while anything uses it)"),
            c(Cmd.CREATE_MKEY, Cmd.CREATE_MKEY_IN, Cmd.HANDLE, "a memory region from a page list; answered once the "
                    + "entries are in the MTT; the key (index << 8 | key byte) is lkey and rkey"),
            c(Cmd.CREATE_IMPLICIT_MKEY, Cmd.CREATE_MKEY_IN, Cmd.HANDLE, "an implicit on-demand region (no page list): "
                    + "its 2 MB pages are filled on first touch through translation misses"),
            c(Cmd.DESTROY_MKEY, Cmd.HANDLE, Cmd.EMPTY,
                    "frees a memory region (MR_HAS_WINDOWS while windows are bound)"),
            c(Cmd.REREG_MKEY, Cmd.REREG_MKEY_IN, Cmd.EMPTY, "gives a region a new translation, PD and access, keeping "
                    + "its key"),
            c(Cmd.ALLOC_MW, Cmd.ALLOC_MW_IN, Cmd.HANDLE, "a memory window of type 1 or 2: its rkey"),
            c(Cmd.DEALLOC_MW, Cmd.HANDLE, Cmd.EMPTY, "frees a memory window"),
            c(Cmd.CREATE_INDIRECT_MKEY, Cmd.CREATE_INDIRECT_MKEY_IN, Cmd.HANDLE, "an indirect mkey whose layout a UMR "
                    + "work request sets; it starts free"),
            c(Cmd.ODP_PREFETCH, Cmd.ODP_PREFETCH_IN, Cmd.EMPTY,
                    "starts faulting an on-demand range in; answers at once"),
            c(Cmd.ODP_PREFETCH_FLUSH, Cmd.ODP_PREFETCH_IN, Cmd.EMPTY, "the same, answered once the pages are in"),
            c(Cmd.ODP_INVALIDATE, Cmd.ODP_PREFETCH_IN, Cmd.EMPTY, "drops an on-demand range's translations (the OS "
                    + "took the pages)"),
            c(Cmd.ALLOC_DM, Cmd.ALLOC_DM_IN, Cmd.HANDLE, "device memory: its offset in the DM window of BAR0"),
            c(Cmd.DEALLOC_DM, Cmd.HANDLE, Cmd.EMPTY, "frees device memory"),
            c(Cmd.CREATE_CQ, Cmd.CREATE_CQ_IN, Cmd.HANDLE, "a completion queue on a ring of 64-byte CQEs: its CQN"),
            c(Cmd.RESIZE_CQ, Cmd.RESIZE_CQ_IN, Cmd.EMPTY, "moves a CQ to a new ring, completions not yet polled first"),
            c(Cmd.DESTROY_CQ, Cmd.HANDLE, Cmd.EMPTY, "frees a CQ (CQ_IN_USE while a QP or SRQ uses it)"),
            c(Cmd.CREATE_QP, Cmd.CREATE_QP_IN, Cmd.HANDLE, "a queue pair on the driver's rings: its QPN"),
            c(Cmd.MODIFY_QP, Cmd.QP_ATTRS, Cmd.EMPTY, "any state transition, with the attributes its mask names "
                    + "(checked against the transition table below)"),
            c(Cmd.QUERY_QP, Cmd.HANDLE, Cmd.QP_ATTRS, "a QP's state and attributes"),
            c(Cmd.DESTROY_QP, Cmd.HANDLE, Cmd.EMPTY, "frees a QP; its work not yet done is dropped"),
            c(Cmd.CREATE_SRQ, Cmd.CREATE_SRQ_IN, Cmd.HANDLE, "a shared receive queue: its SRQN"),
            c(Cmd.CREATE_XRC_SRQ, Cmd.CREATE_XRC_SRQ_IN, Cmd.HANDLE, "an XRC SRQ of an XRC domain"),
            c(Cmd.CREATE_TM_SRQ, Cmd.CREATE_TM_SRQ_IN, Cmd.HANDLE, "a tag-matching SRQ with its tag list"),
            c(Cmd.TM_OP, Cmd.TM_OP_IN, Cmd.HANDLE, "adds, removes or syncs a tag-list entry: the entry's index"),
            c(Cmd.ARM_SRQ, Cmd.ARM_SRQ_IN, Cmd.EMPTY, "sets an SRQ's limit: one SRQ_LIMIT_REACHED event when fewer "
                    + "WQEs remain"),
            c(Cmd.QUERY_SRQ, Cmd.HANDLE, Cmd.HANDLE, "an SRQ's limit (0 once its event fired)"),
            c(Cmd.DESTROY_SRQ, Cmd.HANDLE, Cmd.EMPTY, "frees an SRQ (SRQ_IN_USE while a QP uses it)"),
            c(Cmd.ALLOC_XRCD, Cmd.EMPTY, Cmd.HANDLE, "an XRC domain: its number"),
            c(Cmd.DEALLOC_XRCD, Cmd.HANDLE, Cmd.EMPTY, "frees an XRC domain (XRCD_IN_USE while used)"),
            c(Cmd.ATTACH_MCAST, Cmd.MCAST_ATTACH_IN, Cmd.EMPTY, "a UD QP receives what is sent to a multicast group "
                    + "(its MGID); attaching twice changes nothing"),
            c(Cmd.DETACH_MCAST, Cmd.MCAST_ATTACH_IN, Cmd.EMPTY, "a UD QP leaves a multicast group (NOT_ATTACHED if it "
                    + "is not in it)"),
            c(Cmd.MODIFY_PORT, Cmd.MODIFY_PORT_IN, Cmd.PORT_CAPS, "sets and clears bits of the port's "
                    + "CapabilityMask, which the SMA's PortInfo reports (CM, DeviceManagement...): the mask now; a "
                    + "reset gives back IsCM only"),
            c(Cmd.ALLOC_Q_COUNTER, Cmd.EMPTY, Cmd.HANDLE, "a q counter set, zeroed: its number (1 up; "
                    + "QCounter.MAX_SETS of them)"),
            c(Cmd.SET_QP_COUNTER, Cmd.QP_COUNTER_IN, Cmd.EMPTY, "a QP's transport events count in a q counter set "
                    + "from now on, as well as in the adapter's own counters (set 0: in none)"),
            c(Cmd.QUERY_Q_COUNTER, Cmd.Q_COUNTER_QUERY_IN, Cmd.Q_COUNTER_VALUES, "a q counter set's counts, one word "
                    + "per QCounter; clear 1 zeroes them"),
            c(Cmd.DEALLOC_Q_COUNTER, Cmd.HANDLE, Cmd.EMPTY, "frees a q counter set (Q_COUNTER_IN_USE while a QP "
                    + "counts in it)"));

    /** The command with {@code opcode}, or null. */
    public static Command of(int opcode) {
        for (Command c : ALL) if (c.opcode() == opcode) return c;
        return null;
    }
}
