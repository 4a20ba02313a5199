package nicsim.verbs;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import nicsim.abi.BigEndian;
import nicsim.abi.Cmd;
import nicsim.abi.EqeType;
import nicsim.abi.MtuCode;
import nicsim.driver.Driver;

/**
 * An open device (ibv_context): it owns a UAR page (its doorbells), and everything created under
 * it. Closing it destroys all of that in the adapter, through commands.
 */
public final class Context extends VerbsObject {
    final Driver driver;
    final int uar;
    final Map<Integer, QueuePair> qps = new HashMap<>();
    final Map<Integer, CompletionQueue> cqs = new HashMap<>();
    final Map<Integer, SharedReceiveQueue> srqs = new HashMap<>();
    private final ArrayDeque<AsyncEvent> events = new ArrayDeque<>();
    private final Consumer<long[]> stateTracker = this::deviceEvent;

    Context(Driver driver) {
        super(null);
        this.driver = driver;
        this.uar = (int) DriverCommand.run(driver, Cmd.ALLOC_UAR, Cmd.EMPTY, new Cmd.Empty(), Cmd.HANDLE).handle();
        driver.onEvent(stateTracker);
    }

    /**
     * An affiliated error event means the adapter has already moved the QP to ERR: its state() says so from now on.
     * A port's event is every open context's, as the kernel writes it to every async file.
     */
    private void deviceEvent(long[] e) {
        EventType t = DeviceCodes.verbs(EqeType.of((int) e[0]));
        if (t == EventType.PORT_ERR || t == EventType.PORT_ACTIVE) {
            events.add(new AsyncEvent(t, -1, -1, -1, (int) e[1]));
            return;
        }
        QueuePair qp = qps.get((int) e[1]);
        if (qp != null && EqeType.of((int) e[0]).movesQpToError()) qp.movedByDevice(QpState.ERR);
    }

    public Driver driver() { return driver; }

    public ProtectionDomain allocPd() {
        checkOpen();
        return new ProtectionDomain(this);
    }

    public CompletionQueue createCq(int cqe) { return createCq(cqe, null); }

    public CompletionQueue createCq(int cqe, CompletionChannel channel) {
        checkOpen();
        return new CompletionQueue(this, cqe, channel);
    }

    /** ibv_open_xrcd: a new XRC domain. */
    public Xrcd openXrcd() {
        checkOpen();
        return new Xrcd(this);
    }

    /**
     * ibv_create_qp_ex for a QP with no PD: an XRC target (XRC_RECV), which names its XRC domain
     * and has no queues or CQs of its own. Other QP types are created through a PD.
     */
    public QueuePair createQp(QpInitAttr attr) {
        checkOpen();
        if (attr.qpType() != QpType.XRC_RECV)
            throw new VerbsException(Errno.EINVAL, "Context.createQp is for XRC_RECV QPs; a " + attr.qpType()
                    + " QP is created through its PD");
        return new QueuePair(this, attr);
    }

    /**
     * ibv_alloc_dm: {@code length} bytes of the adapter's device memory, aligned to 2^{@code
     * logAlignReq} (at least 4 bytes); ENOMEM when none is left, EINVAL past max_dm_size.
     */
    public DeviceMemory allocDm(long length, int logAlignReq) {
        checkOpen();
        return new DeviceMemory(this, length, logAlignReq);
    }

    public CompletionChannel createCompChannel() {
        checkOpen();
        return new CompletionChannel(this);
    }

    public DeviceAttr queryDevice() {
        checkOpen();
        return deviceAttr(driver);
    }

    /** What ibv_query_device says of {@code driver}'s adapter (a context's query, or the kernel's for a C driver's). */
    public static DeviceAttr deviceAttr(Driver driver) {
        Cmd.HcaCap c = driver.caps();
        return new DeviceAttr(String.format("%d.%d", Cmd.FW_REV >>> 16, Cmd.FW_REV & 0xffff), Cmd.PCI_VENDOR,
                Cmd.PCI_DEVICE, (int) c.maxQp(), (int) c.maxQpWr(), (int) c.maxSge(), (int) c.maxCq(), (int) c.maxCqe(),
                (int) c.maxMkey(), (int) c.maxPd(), (int) c.maxRdAtomic(), (int) c.maxRdAtomic(), c.maxMsgSize(),
                (int) c.maxInline(), driver.odpSupported() ? OdpCaps.NICSIM : OdpCaps.NONE, c.maxDm());
    }

    public PortAttr queryPort(int port) {
        checkOpen();
        return portAttr(driver, port);
    }

    /** What ibv_query_port says of {@code driver}'s adapter's port {@code port}. */
    public static PortAttr portAttr(Driver driver, int port) {
        if (port != 1)
            throw new VerbsException(Errno.EINVAL, "port " + port + " does not exist (the adapter has port 1)");
        Cmd.HcaCap c = driver.caps();
        // GID[0]: the link-local prefix and the port's GUID, the adapter's node GUID (IBA 4.1.1)
        byte[] gid = new byte[16];
        BigEndian.put64(gid, 0, 0xfe80_0000_0000_0000L);
        BigEndian.put64(gid, 8, c.nodeGuid());
        PortState state = driver.portActive() ? PortState.ACTIVE : PortState.DOWN; // as PORT_ERR/PORT_ACTIVE said last
        return new PortAttr(state, (int) c.lid(), DeviceCodes.verbs(MtuCode.of((int) c.maxMtu())),
                DeviceCodes.verbs(MtuCode.of((int) c.maxMtu())), gid,
                c.maxMsgSize());
    }

    /** Whether an async event for this context's objects has come (a look that takes none). */
    public boolean hasAsyncEvent() {
        if (!events.isEmpty()) return true;
        for (long[] e : driver.events()) if (mine(DeviceCodes.verbs(EqeType.of((int) e[0])), (int) e[1]))
            return true;
        return false;
    }

    private boolean mine(EventType t, int res) {
        boolean srqEvent = t == EventType.SRQ_LIMIT_REACHED || t == EventType.SRQ_ERR;
        return t == EventType.CQ_ERR ? cqs.containsKey(res) : srqEvent ? srqs.containsKey(res) : qps.containsKey(res);
    }

    /** The next async event for this context's QPs or CQs, if any (never blocks). */
    public Optional<AsyncEvent> pollAsyncEvent() {
        checkOpen();
        ArrayDeque<long[]> all = driver.events();
        for (var it = all.iterator(); it.hasNext(); ) {
            long[] e = it.next();
            EventType t = DeviceCodes.verbs(EqeType.of((int) e[0]));
            int res = (int) e[1];
            boolean srqEvent = t == EventType.SRQ_LIMIT_REACHED || t == EventType.SRQ_ERR;
            if (!mine(t, res)) continue;
            it.remove();
            events.add(t == EventType.CQ_ERR ? new AsyncEvent(t, -1, res, -1, -1)
                    : srqEvent ? new AsyncEvent(t, -1, -1, res, -1) : new AsyncEvent(t, res, -1, -1, -1));
        }
        return Optional.ofNullable(events.poll());
    }

    /**
     * Closes the QPs first (they use CQs that are siblings of their PD), then the XRC SRQs (they use
     * an XRC domain, a sibling too), then everything else, newest first.
     */
    @Override public void close() {
        if (isClosed()) return;
        // nobody will take them now
        driver.events().removeIf(e -> mine(DeviceCodes.verbs(EqeType.of((int) e[0])), (int) e[1]));
        for (QueuePair qp : List.copyOf(qps.values())) qp.close();
        for (SharedReceiveQueue s : List.copyOf(srqs.values()))
            if (s.type() != SrqType.BASIC) s.close(); // XRC and TM SRQs hold a CQ
        closeChildren(ProtectionDomain.class); // their regions may hold device memory, which goes with the rest
        super.close();
    }

    @Override protected String describe() { return "Context(uar " + uar + ")"; }

    @Override protected void destroy() {
        driver.removeEventListener(stateTracker);
        DriverCommand.run(driver, Cmd.DEALLOC_UAR, Cmd.HANDLE, new Cmd.Handle(uar), Cmd.EMPTY);
    }
}
