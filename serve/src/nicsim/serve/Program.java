package nicsim.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * An attached process: its device contexts (a session each, one socket each) and what the
 * simulator knows of whether it runs or waits. Runs on the simulator's thread only.
 */
final class Program {
    final int pid;
    final String name;
    /** The device contexts it uses (a forked child uses its parent's), and by which of its files it reaches each. */
    final List<Session> sessions = new ArrayList<>(2);
    private final Map<Integer, Session> bySocket = new HashMap<>(2);
    /**
     * Its rdma_cm files, by number, each with whether events wait in it: a thread reading one that has
     * none waits for a CM event, on the simulation; one that has some is about to run.
     */
    final Map<Integer, BooleanSupplier> cmFiles = new HashMap<>(2);
    /**
     * The connections its rdma_cm files' commands go on, by number, each with its file: a thread asleep reading one
     * waits for the answer to a command serve has not read yet, answered at once, so it runs.
     */
    final Map<Integer, Object> cmCommands = new HashMap<>(2);
    /** The adapters it drives as PCI functions (libnicsim), by the number of the socket it reaches each through. */
    final Map<Integer, PciDevice> devices = new HashMap<>(1);
    /**
     * Wall time of its last request; whether that request was answered (so the program runs on) rather than left
     * waiting.
     */
    long lastRequestNanos = System.nanoTime();
    boolean answered;
    /**
     * Its threads asleep outside verbs at the last look while it waited in one, and how often each had had a CPU
     * then (Pacer: whether they ran since).
     */
    final Map<Integer, Long> asleepRuns = new HashMap<>(4);
    /** Its requests not left open (each one something it did that serve saw), and their count at the last look. */
    long acts, actsSeen;
    /**
     * RdmaCm.written when its waits were first cut for an RDMA CM event it had not read (-1: never), and the wall
     * time then (Pacer: how long time has held for it).
     */
    long cmCutAt = -1, cmCutSince;
    /**
     * Since its last request, a wall time and its time runnable then (-1: not looked yet), to tell spinning from
     * sleeping.
     */
    long watchWall = -1, watchRunnable;

    Program(int pid, String name) {
        this.pid = pid;
        this.name = name;
    }

    /** A request of this program came; {@code waits}: it was left open (a poll that found nothing). */
    void requested(boolean waits) {
        if (!waits) acts++;
        lastRequestNanos = System.nanoTime();
        answered = !waits;
        watchWall = -1;
    }

    /** The session whose socket is the program's file {@code fd}, or null. */
    Session sessionOnSocket(int fd) { return bySocket.get(fd); }

    /** The program reaches session {@code s} through its file {@code fd}. */
    void uses(Session s, int fd) {
        bySocket.put(fd, s);
        if (!sessions.contains(s)) sessions.add(s);
    }

    /** The program closed file {@code fd}, its way to session {@code s}. */
    void leaves(Session s, int fd) {
        bySocket.remove(fd);
        if (!bySocket.containsValue(s)) sessions.remove(s);
    }

    /** Whether it holds a whole PCI function (not only a user context on one the kernel brought up). */
    boolean drivesFunction() {
        for (PciDevice d : devices.values()) if (d.user == null) return true;
        return false;
    }

    /** Sessions of this program with a request left open. */
    int openWaits() {
        int n = 0;
        for (Session s : sessions) if (s.waits.waiting() != null) n++;
        for (PciDevice d : devices.values()) if (d.waiting()) n++;
        return n;
    }

    /** Whether an event waits to be read in one of its files: an rdma_cm file, a completion channel, its async file. */
    boolean eventsPending() {
        for (var f : cmFiles.values()) if (f.getAsBoolean()) return true;
        for (Session s : sessions) if (s.events.pending()) return true;
        return false;
    }

    /** Whether an RDMA CM event waits to be read in one of its rdma_cm files. */
    boolean cmEventPending() {
        for (var f : cmFiles.values()) if (f.getAsBoolean()) return true;
        return false;
    }

    /** Whether nothing of it is attached any more: no device context, no rdma_cm file. */
    boolean detached() { return sessions.isEmpty() && cmFiles.isEmpty() && devices.isEmpty(); }

    /** DMA writes the adapters have made into the program's registered memory so far. */
    long memoryWrites() {
        long n = 0;
        for (Session s : sessions) n += s.memoryWrites();
        for (PciDevice d : devices.values()) n += d.memoryWrites();
        return n;
    }

    /**
     * The time the program's threads have been runnable, in ns: on a CPU or waiting in a run queue for one (the first
     * two fields of each one's /proc/&lt;pid&gt;/task/&lt;tid&gt;/schedstat), or -1 if it cannot be read. A thread
     * that spins is always runnable, however little CPU a loaded machine gives it; one that sleeps is not. A thread
     * spinning while another waits in a verb (UCX's async thread yielding for a lock the waiting one holds) spins
     * the program.
     */
    long runnableNanos() {
        try (var tasks = Files.newDirectoryStream(Path.of("/proc", Integer.toString(pid), "task"))) {
            long sum = 0;
            for (Path t : tasks) {
                try {
                    String[] f = Files.readString(t.resolve("schedstat")).trim().split(" ");
                    sum += Long.parseLong(f[0]) + Long.parseLong(f[1]);
                } catch (IOException e) { // the thread ended meanwhile
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    @Override public String toString() { return name + " (pid " + pid + ")"; }
}
