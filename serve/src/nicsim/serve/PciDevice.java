package nicsim.serve;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.ErrnoException;
import nicsim.driver.Host;
import nicsim.host.ConfigSpace;
import nicsim.host.PciBus;
import nicsim.verbs.Errno;
import nicsim.verbs.VerbsException;

/**
 * One node's adapter, opened as a PCI function by a driver in another process (vfio-user's model:
 * the device is the server, the driver its one client). The driver reads and writes config space
 * and BAR0 (an MMIO read is answered once the simulated read completes; a write is posted and has
 * no answer), maps its own pages for the adapter's DMA (each mapping gets an I/O virtual address,
 * a window of the node's bus addresses backed by the driver's memory through /proc/&lt;pid&gt;/mem),
 * and takes its MSI-X interrupts from WAIT, the one request that lets simulated time move on the
 * driver's behalf: it is answered when an interrupt comes, the adapter writes into the driver's
 * mapped memory, or the time asked for has passed. Runs on the simulator's thread only.
 */
final class PciDevice implements AutoCloseable {
    /** Config space bytes a driver may reach (type 0 header and the capabilities after it). */
    static final int CONFIG_BYTES = 256;

    /** The node's host: a fresh one after each function-level reset ({@link #rebind}). */
    Host host;
    final Program program;
    final int socketFd;
    private final ProcMemory memory;
    /** The driver's DMA mappings: the only memory the adapter reaches. */
    private final PciDmaMaps maps;
    /** The driver wrote Initiate FLR: its function is to be reset once the write is taken ({@link #resetAsked}). */
    private boolean resetAsked;
    /**
     * Until this simulated time the function is resetting (pci.flr.time after the reset began): a config
     * read gives all ones, as a root complex makes of a function that does not answer; config and MMIO
     * writes are dropped; an MMIO read is an unsupported request. PCIe lets a function discard requests so.
     */
    private long resetUntil;
    private long droppedWhileResetting;
    /** PCI_OPEN's flags: BAR0 is a 32-bit non-prefetchable BAR while this driver holds the function. */
    static final int OPEN_BAR0_32BIT = 1;
    private boolean bar0Made32Bit;
    /** MSI-X messages signalled and not yet handed to the driver: each one's data (the vector's). */
    private final ArrayDeque<Integer> interrupts = new ArrayDeque<>();
    private long interruptsRaised, mmioReads, mmioWrites, requests;
    /** The request left open (an MMIO read under way, or a WAIT), or null. */
    private Open open;
    /** DMA writes into the driver's memory when it was last answered: a WAIT returns once this moves. */
    private long writesSeen;
    /** The adapter's count of refused commands and register writes when the driver opened it. */
    private int errorsAtOpen;
    /** Commands and writes the adapters before the last reset refused (each reset brings a fresh count). */
    private int errorsBeforeReset;
    /** What the device found wrong, told and counted. */
    private final PciViolations violations;
    /** A user context's objects and UARs (null: the driver holds the whole function); shared by importers. */
    final UserContext user;
    /** The kernel's paging of this process's memory for the implicit regions it makes. */
    private final ImplicitPages pages;

    /** An interrupt for this process's waits (a vector of a CQ it made). */
    private void interrupted(int vector) {
        interrupts.add(vector);
        interruptsRaised++;
    }

    /** A request left open: a WAIT until {@code deadline}, or an MMIO read whose answer is {@code reply} once set. */
    private static final class Open {
        final boolean isWait;
        final long deadline;
        Wire.Out reply;

        Open(boolean isWait, long deadline) {
            this.isWait = isWait;
            this.deadline = deadline;
        }
    }

    /**
     * Driver {@code program}'s function on {@code host}, or with {@code user} its user context on the
     * adapter the kernel (the Java driver) brings up: commands through UCTX_CMD, BAR0 writes to its
     * own UAR pages only, its CQs' interrupts, and no config writes or MMIO reads.
     */
    PciDevice(Host host, Program program, int socketFd, boolean user, Session session, UserContext shared)
            throws IOException {
        if (!user && host.probed())
            throw new VerbsException(Errno.EBUSY, "node " + host.index + "'s adapter is driven by the Java driver "
                    + "already (a program attached through libibverbs): serve another node for the PCI face");
        this.host = host;
        this.program = program;
        this.socketFd = socketFd;
        this.memory = new ProcMemory(program.pid);
        this.user = !user ? null
                : shared != null ? shared.join() : new UserContext(host.driver(), session, program.pid);
        this.pages = user ? new ImplicitPages(host, memory) : null;
        this.errorsAtOpen = host.firmware.commandErrors();
        this.maps = new PciDmaMaps(this, memory);
        this.violations = new PciViolations(this);
        if (user) return; // the kernel's driver keeps the interrupts and the bus
        hook();
    }

    /** The host's bus is this driver's: its interrupts, its IOMMU, its function's reset. */
    private void hook() {
        host.bus.onInterrupt((address, data) -> {
            interrupts.add(data);
            interruptsRaised++;
        });
        host.bus.iommu(maps::mapped); // the adapter reaches only what the driver mapped, as behind an IOMMU
        host.bus.configSpace(0).onFunctionReset(() -> resetAsked = true);
    }

    /** Whether the driver initiated a function-level reset since last asked (its face then resets the node). */
    boolean resetAsked() {
        boolean was = resetAsked;
        resetAsked = false;
        return was;
    }

    /**
     * What the function held when it was reset, the sanitizer's view: the adapter's objects by kind (none
     * if it was never brought up) and the driver's DMA mappings, which a reset leaves to the host.
     */
    String leftBehind() {
        StringBuilder b = new StringBuilder();
        host.firmware.objects().forEach((kind, n) -> { if (n > 0) b.append(b.isEmpty() ? "" : ", ").append(kind)
                .append(' ').append(n); });
        return (host.firmware.initialized() ? "the adapter up" : "the adapter down")
                + (b.isEmpty() ? "" : " with " + b) + ", " + maps.size() + " DMA maps";
    }

    /**
     * The function was reset at the PCI face ({@code fresh}: the node's new host, the old one gone with
     * every queue, context, key, event queue, pending DMA and the MSI-X table): the driver keeps its DMA
     * mappings (the host's IOMMU's, not the function's), at the same bus addresses; config space is at its
     * reset values (BAR0 unassigned, memory space, bus mastering and MSI-X off), and the function answers
     * nothing until {@code readyAt}.
     */
    void rebind(Host fresh, long readyAt) {
        errorsBeforeReset += host.firmware.commandErrors() - errorsAtOpen;
        errorsAtOpen = 0;
        host = fresh;
        maps.attachTo(fresh);
        if (bar0Made32Bit) fresh.bus.configSpace(0).bar0As32Bit(true);
        hook();
        violations.reset();
        resetUntil = readyAt;
    }

    /** The function resets until {@code t} (a reset begun before this driver opened it). */
    void resettingUntil(long t) { resetUntil = t; }

    /** Whether the function is still resetting: a request it cannot take is then dropped. */
    private boolean resetting() { return host.sim.now() < resetUntil; }

    /**
     * PCI_OPEN's OPEN_BAR0_32BIT: BAR0 reads back as a 32-bit non-prefetchable BAR until the driver
     * goes, for a bus that places none other (QEMU's remote PCI proxy: libnicsim/qemu).
     */
    void bar0As32Bit() {
        try {
            host.bus.configSpace(0).bar0As32Bit(true);
        } catch (IllegalArgumentException x) {
            throw new VerbsException(Errno.EINVAL, "PCI_OPEN flag BAR0 32-bit: " + x.getMessage());
        }
        bar0Made32Bit = true;
    }

    /** The driver's posted-write ring (PCI_POSTED_RING), or null: its writes come on the socket. */
    private PostedRing posted;

    /**
     * Takes the writes the driver posted in its ring since last looked: before each of its requests (a
     * read or WAIT is not passed by the writes before it, as on PCIe) and before simulated time moves.
     */
    void drainPosted() {
        if (posted == null) return;
        try {
            posted.drain(this::postedWrite);
        } catch (ErrnoException x) {
            refusedWrite(x.getMessage());
        }
    }

    /**
     * One posted BAR0 write at {@code offset}, from the socket or the ring: refused (VerbsException) past
     * BAR0, or for a user context outside its UAR pages and device memory.
     */
    private void mmioWrite(long offset, byte[] data) {
        if (user != null && !user.mayWrite(offset, data.length))
            throw new VerbsException(Errno.EPERM, String.format("BAR0 write of %d bytes at 0x%x: not in a "
                    + "UAR page or device memory of this context", data.length, offset));
        long addr = barAddress(offset);
        mmioWrites++;
        host.bus.mmioWrite(addr, data); // posted: what hits nothing is counted by the bus as unsupported
    }

    /** A write from the ring: nobody waits for an answer, so a refused one is a violation. */
    private void postedWrite(long offset, byte[] data) {
        try {
            mmioWrite(offset, data);
        } catch (ErrnoException x) {
            refusedWrite(x.getMessage());
        }
    }

    /** Handles one request; null when it is left open (answered by {@link #answer}) or needs no answer. */
    Wire.Out handle(Wire.Op op, Wire.In in) {
        requests++;
        drainPosted();
        if (user != null) UctxRequests.check(user, op, in);
        return switch (op) {
            case UCTX_CMD, UCTX_IMPORT, UCTX_CQ_CHANNEL -> UctxRequests.handle(user, op, in, this::interrupted, pages);
            case PCI_CONFIG_READ -> {
                int offset = configOffset(in.read(WireLayout.ConfigOffset.class).offset());
                yield new Wire.Out(new WireLayout.ConfigValue(resetting() ? dropped(-1)
                        : host.bus.configRead32(0, offset)));
            }
            case PCI_CONFIG_WRITE -> {
                WireLayout.ConfigWrite q = in.read(WireLayout.ConfigWrite.class);
                int offset = configOffset(q.offset());
                if (!resetting()) host.bus.configWrite32(0, offset, q.value());
                else dropped(0);
                yield new Wire.Out();
            }
            case PCI_MMIO_WRITE -> { // posted: a refusal is told as a violation (PciFace)
                WireLayout.BarAccess q = in.read(WireLayout.BarAccess.class);
                long offset = barOffset(q);
                byte[] data = in.bytes(q.length(), "data");
                if (!resetting()) mmioWrite(offset, data);
                else dropped(0);
                yield null;
            }
            case PCI_POSTED_RING -> {
                WireLayout.PostedRingRequest q = in.read(WireLayout.PostedRingRequest.class);
                if (posted != null) throw new VerbsException(Errno.EBUSY, "PCI_POSTED_RING: the driver has one");
                posted = PostedRing.open(program.pid, q.fd(), q.ringBytes());
                yield new Wire.Out();
            }
            case PCI_MMIO_READ -> {
                WireLayout.BarAccess q = in.read(WireLayout.BarAccess.class);
                long addr = barAddress(barOffset(q));
                int length = q.length();
                if (length != 4 && length != 8)
                    throw new VerbsException(Errno.EINVAL, "MMIO read length " + length + ": reads are 4 or 8 bytes");
                Open o = new Open(false, Long.MAX_VALUE);
                mmioReads++;
                if (resetting()) { // an unsupported request: all ones, as a read of nothing
                    byte[] ones = new byte[length];
                    Arrays.fill(ones, (byte) -1);
                    dropped(0);
                    yield new Wire.Out(new WireLayout.MmioReadStatus(1)).bytes(ones);
                }
                open = o;
                host.bus.mmioRead(addr, length, r -> o.reply = new Wire.Out(
                        new WireLayout.MmioReadStatus(r.status() == PciBus.MmioStatus.OK ? 0 : 1)).bytes(r.data()));
                yield null;
            }
            case PCI_DMA_MAP -> new Wire.Out(new WireLayout.Iova(maps.map(in)));
            case PCI_DMA_UNMAP -> {
                maps.unmap(in.read(WireLayout.Iova.class).iova());
                yield new Wire.Out();
            }
            case PCI_WAIT -> {
                long picos = in.read(WireLayout.PciWaitRequest.class).picoseconds();
                long now = host.sim.now();
                open = new Open(true, picos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + picos);
                yield null;
            }
            default -> throw new Wire.Malformed(op + " is not a request of the PCI face");
        };
    }

    /** Counts a request the resetting function dropped; {@code value} is what it reads as. */
    private int dropped(int value) {
        droppedWhileResetting++;
        return value;
    }

    private static int configOffset(int offset) {
        if (offset < 0 || offset > CONFIG_BYTES - 4 || (offset & 3) != 0)
            throw new VerbsException(Errno.EINVAL, "config offset " + offset + ": dword-aligned, below "
                    + CONFIG_BYTES);
        return offset;
    }

    /** A BAR access's offset (its BAR must be BAR0). */
    private static long barOffset(WireLayout.BarAccess q) {
        if (q.bar() != 0) throw new VerbsException(Errno.EINVAL, "bar " + q.bar() + ": the adapter has BAR0 only");
        return q.offset();
    }

    private long barAddress(long offset) {
        ConfigSpace cs = host.bus.configSpace(0);
        if (offset < 0 || offset >= cs.barSize(0))
            throw new VerbsException(Errno.EINVAL, String.format("BAR0 offset 0x%x: BAR0 is 0x%x bytes", offset,
                    cs.barSize(0)));
        return cs.barBase(0) + offset;
    }

    /**
     * PCI_DMA_MAP's flags: the adapter may write the pages; and (a user context's) a write into them
     * ends a WAIT: a CQ's ring, where a poll that found nothing waits for the next CQE.
     */
    static final int MAP_WRITABLE = 1, MAP_WAKE = 2;
    /**
     * PCI_DMA_MAP's flag: the mapping is at the IOVA the driver gives (a u64 after the flags), not one the
     * device chooses: a guest's RAM at its guest-physical addresses, which its kernel uses as bus addresses.
     */
    static final int MAP_FIXED = 4;
    /** Writes into a user context's waking mappings when it was last answered. */
    private long wakesSeen;

    /** A posted write of the driver's that reached nothing (no answer can say so): told as a violation. */
    void refusedWrite(String why) { violations.refusedWrite(why); }

    /** What the device found wrong since last asked, each with its simulated time ({@link PciViolations}). */
    List<String> newViolations() { return violations.newViolations(); }

    /** Whether its program's memory is released: the program exits, and its files close next. */
    boolean memoryGone() { return memory.gone(); }

    /** Whether a request is left open. */
    boolean waiting() { return open != null; }

    /** Why its adapter failed (null: it did not): every later request but a posted write is then EIO. */
    String fatal;

    /**
     * Its adapter faulted and was reset: whether a request was open (its caller answers it EIO). The
     * old adapter is touched no more, closing this included.
     */
    boolean fatal(String why) {
        fatal = why;
        boolean wasOpen = open != null;
        open = null;
        return wasOpen;
    }

    /** Whether the open request can be answered now. */
    boolean waitSatisfied() {
        if (memory.gone()) return true; // the run stops: the program exits, and its function is let go at the look
        if (open == null) return false;
        if (!open.isWait) return open.reply != null;
        // a user context wakes on its CQEs (its waking mappings); a whole function's driver on any DMA write
        boolean written = user != null ? maps.wakes != wakesSeen : memory.writes() != writesSeen;
        return !interrupts.isEmpty() || written || host.sim.now() >= open.deadline;
    }

    /**
     * The open request's answer if it has one ({@code giveUp}: the simulation has nothing left to do,
     * so a WAIT is answered as it stands), or null.
     */
    Wire.Out answer(boolean giveUp) {
        if (open == null || !(waitSatisfied() || giveUp && open.isWait)) return null;
        Wire.Out out = open.isWait ? interruptsOut() : open.reply;
        open = null;
        answered();
        return out;
    }

    /** The driver has its answer: what it has seen of its memory is now. */
    void answered() {
        writesSeen = memory.writes();
        wakesSeen = maps.wakes;
    }

    private Wire.Out interruptsOut() {
        List<Integer> v = new ArrayList<>(interrupts);
        interrupts.clear();
        Wire.Out out = new Wire.Out(new WireLayout.Interrupts(host.sim.now(), v.size()));
        for (int d : v) out.u32(d);
        return out;
    }

    /** DMA writes the adapter made into the driver's memory so far. */
    long memoryWrites() { return memory.writes(); }

    /** The driver's memory, while simulated time moves: held, or settled ({@link ProcMemory#hold}). */
    void holdMemory(boolean hold) { if (hold) memory.hold(); else memory.settle(); }

    /**
     * What the driver did, for serve's log: its requests, and what it did wrong that the device saw:
     * commands and register writes refused, DMA into memory it unmapped, the adapter left up.
     */
    String summary() {
        StringBuilder b = new StringBuilder(String.format("%d requests, %d MMIO writes, %d MMIO reads, %d interrupts, "
                + "%d DMA maps left", requests, mmioWrites, mmioReads, interruptsRaised, maps.size()));
        int refused = host.firmware.commandErrors() - errorsAtOpen + errorsBeforeReset;
        if (violations.count > 0) b.append("; ").append(violations.count).append(" violations (the log tells each)");
        if (refused > 0)
            b.append("; the adapter refused ").append(refused).append(" malformed commands or register writes");
        if (droppedWhileResetting > 0)
            b.append("; ").append(droppedWhileResetting).append(" requests dropped while its function reset");
        if (memory.failures() > 0)
            b.append("; DMA to its memory refused ").append(memory.failures()).append(" times, first: ")
                    .append(memory.firstFailure());
        if (user != null) {
            if (!released.isEmpty()) b.append("; destroying what it left was refused: ").append(released);
            return b.toString();
        }
        if (host.firmware.initialized())
            b.append("; it left the adapter up (no TEARDOWN_HCA): its function is reset");
        return b.toString();
    }

    /** What closing a user context destroyed and the adapter refused to. */
    List<String> released = List.of();

    /**
     * The driver left: its mappings go (its face then resets a whole function: {@link PciFace#closed}).
     * A user context's objects are destroyed first, as the kernel does when a process exits.
     */
    @Override public void close() {
        if (fatal != null) { // the adapter is gone (reset): only the process's memory is let go
            memory.close();
            return;
        }
        try {
            drainPosted(); // what it wrote before it left still lands
            if (user != null && user.leave()) released = user.release();
        } finally { // even if the adapter faulted on the way (running the destroys): the process's pages go
            maps.release();
            if (bar0Made32Bit) host.bus.configSpace(0).bar0As32Bit(false); // the next driver sees the usual BAR0
            if (user == null) {
                host.bus.onInterrupt((address, data) -> { });
                host.bus.iommu(null);
            }
            memory.close();
        }
    }
}
