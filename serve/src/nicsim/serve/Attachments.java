package nicsim.serve;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import nicsim.serve.Transport.Connection;

/**
 * The programs attached to serve and who each connection is: a program's way to a device context (its session), or
 * its async file or a completion channel. A program's lifetime: its connections join sessions; when the last
 * connection to a session ends, everything the session had in the adapter is released, and its report waits until
 * no user context of the program is open; a program whose memory is gone (it exits) is let go at once, its
 * connections fenced, before its sockets' ends reach serve.
 *
 * <p><b>Threads.</b> Everything here belongs to the simulation's thread; what {@link #attached} and
 * {@link #holdings} read is also read by others, under this object's lock.
 */
final class Attachments {
    private final RunReport report;
    private final PrintStream log;
    /** Takes the faults events threw (each its adapter's); whether there was one. */
    private final BooleanSupplier takeFaults;
    /** The programs attached, by process, and each connection's session (device context), its program and file. */
    private final Map<Integer, Program> programs = new LinkedHashMap<>();
    /** In the order the connections came (not by identity hash): what is sent to each goes in one order every run. */
    private final Map<Connection, End> ends = new LinkedHashMap<>();

    /**
     * A program's way to a session: its file {@code fd} (a forked child reaches its parent's sessions
     * through files of its own).
     */
    record End(Session session, Program program, int fd) {}
    /** The event-file connections (async files, completion channels): whose each is, and what its closing undoes. */
    private final Map<Connection, EventFile> eventFiles = new HashMap<>();

    private record EventFile(Session session, Runnable gone) {}
    /** Programs' ended sessions whose report waits for a user context still open (see {@link #end}). */
    private final Map<Program, List<Runnable>> pendingReports = new HashMap<>();
    /**
     * Connections whose end is being handled (their objects released, their program's report printed), and
     * programs whose report waits for a user context: attached() counts both, so a reader of the log after it
     * reaches 0 finds every report whole.
     */
    private int ending, pending;

    Attachments(RunReport report, PrintStream log, BooleanSupplier takeFaults) {
        this.report = report;
        this.log = log;
        this.takeFaults = takeFaults;
    }

    /** Device contexts attached now. */
    synchronized int attached() { return ends.size() + ending + pending; }

    /** What is held for programs now: device contexts, programs and event files, by kind into {@code m}. */
    synchronized void holdings(Map<String, Integer> m) {
        m.put("contexts", ends.size());
        m.put("programs", programs.size());
        m.put("event files", eventFiles.size());
    }

    /** The programs attached, in the order they came (a live view). */
    Collection<Program> programs() { return programs.values(); }

    /** Whether no connection is a program's way to a context. */
    boolean none() { return ends.isEmpty(); }

    /** Connection {@code c}'s way to a session, or null (a new connection, or an event file). */
    End end(Connection c) { return ends.get(c); }

    /** Process {@code pid} (its program's path {@code name}), known from now on if it was not. */
    Program program(int pid, String name) {
        return programs.computeIfAbsent(pid, k -> new Program(pid, Path.of(name).getFileName().toString()));
    }

    /** Program {@code p} is forgotten if it holds nothing any more. */
    void leftIfDetached(Program p) { if (p.detached()) programs.remove(p.pid); }

    /** Every program that holds nothing is forgotten (one known by a first request that then failed). */
    void forgetDetached() { programs.values().removeIf(Program::detached); }

    /** Session {@code id} of process {@code pid}, or null. */
    Session session(int pid, int id) {
        Program p = programs.get(pid);
        return p == null ? null : p.sessions.stream().filter(x -> x.id == id).findFirst().orElse(null);
    }

    /** Connection {@code c} is program {@code p}'s way to session {@code s}, through its file {@code fd}. */
    void joined(Connection c, Session s, Program p, int fd) {
        p.uses(s, fd);
        p.requested(false);
        s.ends++;
        synchronized (this) { ends.put(c, new End(s, p, fd)); }
        sessions = null;
    }

    /** Connection {@code c} is an event file of session {@code s}; {@code gone} undoes it when it closes. */
    void eventFile(Connection c, Session s, Runnable gone) { eventFiles.put(c, new EventFile(s, gone)); }

    /** Event file {@code c} closed (if it is one): what it was to the session is undone. */
    void eventFileClosed(Connection c) {
        EventFile f = eventFiles.remove(c);
        if (f != null) f.gone().run();
    }

    /**
     * The contexts open now (CONTEXTS): each one's session, the process that opened it, its command
     * file's number there, and its node. ibv_import_device finds by them which context a command
     * file it was given is a duplicate of (kcmp(2) compares the two files).
     */
    synchronized Wire.Out contexts() {
        Set<Session> seen = new LinkedHashSet<>();
        for (End e : ends.values()) seen.add(e.session());
        Wire.Out out = new Wire.Out().u32(seen.size());
        for (Session s : seen) out.put(new WireLayout.ContextEntry(s.id, s.program.pid, s.cmdFd, s.host.index));
        return out;
    }

    /**
     * A program's connection to a context ended; when it was the context's last (a forked child's
     * leaves its parent's), everything the context had in the adapter is released, and the others go on.
     */
    void end(Connection c, String how) {
        c.close();
        End gone;
        synchronized (this) {
            gone = ends.remove(c);
            sessions = null;
            ending++; // attached() counts it until its report is out: a reader of the log then sees it whole
        }
        try {
            if (gone != null) ended(gone, how);
        } finally {
            synchronized (this) { ending--; }
        }
    }

    private void ended(End gone, String how) {
        Session s = gone.session();
        gone.program().leaves(s, gone.fd());
        if (gone.program().detached()) programs.remove(gone.program().pid);
        if (--s.ends > 0) return;
        for (var it = eventFiles.entrySet().iterator(); it.hasNext(); ) { // its files close with it
            var f = it.next();
            if (f.getValue().session() != s) continue;
            f.getKey().close();
            it.remove();
        }
        Program p = s.program;
        try {
            s.close();
        } catch (RuntimeException e) { // an event's fault while the destroys ran is its adapter's: that node resets
            if (!takeFaults.getAsBoolean()) log.println("nicsim serve: releasing " + p + "'s objects: " + e);
        }
        // a C driver's user context may close after its libibverbs session (the process's two sockets, taken in
        // either order): its QPs, destroyed then, belong in the report, which waits for it
        pendingReports.computeIfAbsent(p, k -> new ArrayList<>()).add(() -> report.ended(s, p, how));
        synchronized (this) { pending = pendingReports.size(); }
        reportIfClosed(p);
    }

    /** Reports {@code p}'s ended session once none of its user contexts is open any more. */
    void reportIfClosed(Program p) {
        for (PciDevice d : p.devices.values()) if (d.user != null) return;
        List<Runnable> r = pendingReports.get(p);
        if (r == null) return;
        r.forEach(Runnable::run);
        pendingReports.remove(p);
        synchronized (this) { pending = pendingReports.size(); }
    }

    /**
     * Lets go every connection of a process whose memory is gone, as the kernel's close of an exiting process's files
     * would a moment later, rather than have the adapter run its queues on zeros until its sockets' ends reach serve.
     * By pid: a forked child's death does not end its parent's session. Makes nothing while no memory is gone.
     */
    void fenceExited() {
        List<Session> attached = sessions();
        boolean any = false;
        for (int i = 0; i < attached.size() && !any; i++) any = attached.get(i).anyMemoryGone();
        if (!any) return;
        Set<Integer> gone = new HashSet<>();
        for (Session s : attached) gone.addAll(s.memoryGone());
        if (gone.isEmpty()) return;
        for (Map.Entry<Connection, End> e : List.copyOf(ends.entrySet())) {
            if (!gone.contains(e.getValue().program().pid)) continue;
            e.getKey().fenced = true;
            end(e.getKey(), "exited (its memory is gone)");
        }
        for (Session s : attached) for (int pid : gone) s.letGo(pid);
    }

    /**
     * The sessions attached, each once, in the order their first connections came: made again only after a
     * connection joined or ended, so a look while nothing changed allocates nothing. A list once returned never
     * changes (a caller that ends connections as it goes keeps the sessions it started with).
     */
    List<Session> sessions() {
        List<Session> out = sessions;
        if (out == null) {
            Set<Session> each = new LinkedHashSet<>();
            for (End e : ends.values()) each.add(e.session());
            sessions = out = List.copyOf(each);
        }
        return out;
    }

    /** {@link #sessions()} as last made; null once a connection joined or ended since. */
    private List<Session> sessions;

    /** The simulator stops: every program's connection to a context ends ({@code how}). */
    void closeAll(String how) {
        for (Connection c : List.copyOf(ends.keySet())) end(c, how);
    }

    /** Every report still waiting for a user context is made (their contexts went with the PCI face). */
    void reportAll() {
        for (List<Runnable> r : pendingReports.values()) r.forEach(Runnable::run);
        pendingReports.clear();
        synchronized (this) { pending = 0; }
    }
}
