package nicsim.fabric;

/**
 * The directed-route fields of an SMP of class 0x81 (IBA 14.2.1.2) and the steps a node's SMI takes on
 * them (IBA 14.2.2, C14-9 on the way out, C14-13 on the way back). The hop pointer counts the hops
 * taken; the initial path lists the port to leave by at each hop (entry 0 unused), the return path the
 * port each hop came in by, which the way back retraces. nicsim routes SMPs whose directed part ends the
 * route (DrDLID permissive); it may start at the requester (DrSLID permissive) or, LID-routed to it first, at
 * the switch, the answer then LID-routed back from there to DrSLID. Every hop is a port's link, and a
 * port's neighbour is the fabric's switch.
 */
public final class DirectedRoute {
    private DirectedRoute() {}

    /**
     * What a step gives: the SMP goes to this node's own SMA or SM, or it is dropped, or (a switch, on the way
     * back) the rest of the way is LID-routed to DrSLID (else: a port number).
     */
    public static final int LOCAL = 0, DROP = -1, TO_DR_SLID = -2;

    public static boolean is(byte[] m) { return m.length >= Mad.SIZE && Mad.mgmtClass(m) == Mad.CLASS_SUBN_DR; }

    public static int hopCount(byte[] m) { return m[Mad.DR_HOP_CNT] & 0xff; }

    public static int hopPointer(byte[] m) { return m[Mad.DR_HOP_PTR] & 0xff; }

    /** The D bit: set on the way back to the requester. */
    public static boolean returning(byte[] m) { return (Mad.status(m) & Mad.DR_DIRECTION) != 0; }

    /** Whether the directed part ends the route (DrDLID permissive): no LID-routed part after it. */
    public static boolean endsDirected(byte[] m) { return Mad.get16(m, Mad.DR_DLID) == Mad.PERMISSIVE_LID; }

    /** Whether the directed part starts at the requester (DrSLID permissive): no LID-routed part before it. */
    public static boolean startsDirected(byte[] m) { return Mad.get16(m, Mad.DR_SLID) == Mad.PERMISSIVE_LID; }

    /**
     * The SMI's step as the SMP leaves this node (a request it starts, an answer of its SMA, or, on a switch, an
     * SMP it passes on): the hop pointer moves and the port to send on is returned, or {@link #LOCAL} for a
     * route of no hops (the node's own SMA, or the requester on the way back), or {@link #DROP}.
     */
    public static int leave(byte[] m, boolean isSwitch) {
        int cnt = hopCount(m), ptr = hopPointer(m);
        if (cnt == 0) return LOCAL;
        if (!returning(m)) {
            if (ptr == 0 || isSwitch && ptr < cnt) {
                m[Mad.DR_HOP_PTR] = (byte) (ptr + 1); // C14-9:1, C14-9:2
                return port(m[Mad.DR_INITIAL_PATH + ptr + 1]);
            }
            return DROP;
        }
        if (ptr == cnt + 1 || isSwitch && ptr >= 2 && ptr <= cnt) {
            m[Mad.DR_HOP_PTR] = (byte) (ptr - 1); // C14-13:1, C14-13:2
            return port(m[Mad.DR_RETURN_PATH + ptr - 1]);
        }
        return DROP;
    }

    /** A path's entry as a port to leave by: port 0 (a switch's management port) is no link. */
    private static int port(byte entry) { return entry == 0 ? DROP : entry & 0xff; }

    /**
     * The SMI's step as the SMP comes in on port {@code inPort}: {@link #LOCAL} when this node is the end (of the
     * way out: the return path records the port, the hop pointer passes the count, as the SMA answers it; of the
     * way back: the hop pointer returns to 0, for the requester), else whether a switch passes it on
     * ({@code inPort}, the caller then calls {@link #leave}) or {@link #DROP}.
     */
    public static int arrive(byte[] m, int inPort, boolean isSwitch) {
        int cnt = hopCount(m), ptr = hopPointer(m);
        // back at the requester by the LID-routed part that started it; else a pointer of 0 crossed no link
        if (ptr == 0) return returning(m) && !isSwitch && !startsDirected(m) ? LOCAL : DROP;
        if (cnt == 0) return DROP;
        if (!returning(m)) {
            if (ptr > cnt) return DROP;
            m[Mad.DR_RETURN_PATH + ptr] = (byte) inPort;
            if (ptr < cnt) return isSwitch ? inPort : DROP; // C14-9:2: only a switch is a hop on the way
            m[Mad.DR_HOP_PTR] = (byte) (cnt + 1); // C14-9:3: the end of the route, for the SMA
            return LOCAL;
        }
        if (ptr == 1) { // C14-13:3: back where the directed part started
            m[Mad.DR_HOP_PTR] = 0;
            if (!isSwitch) return LOCAL;
            return startsDirected(m) ? DROP : TO_DR_SLID; // the switch runs no SM: nothing of its own comes back
        }
        return isSwitch && ptr <= cnt ? inPort : DROP;
    }
}
