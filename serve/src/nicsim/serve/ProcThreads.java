package nicsim.serve;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What an attached program's threads are doing, as the kernel shows it in /proc/&lt;pid&gt;/task:
 * each thread's scheduler state and, for one asleep in a system call, which call and its first
 * argument (/proc/&lt;pid&gt;/task/&lt;tid&gt;/syscall, readable by a tracer: the provider lets the
 * simulator in with PR_SET_PTRACER). A program all of whose threads sleep waits on something
 * outside itself: its peer over TCP, a completion channel or async file of ours (read, poll,
 * epoll_wait), a timer.
 */
final class ProcThreads {
    private ProcThreads() {}

    /**
     * One thread: its id, its state letter (R, S, D, T, t, Z...) and, asleep in a read of a file, that file's number
     * (else -1).
     */
    record Thread(int tid, char state, int readingFd) {
        boolean asleep() { return state == 'S'; }
    }

    /** System call numbers of the reads that name their file in the first argument, on this machine's architecture. */
    private static final int[] READS = switch (System.getProperty("os.arch")) {
        case "aarch64" -> new int[]{63, 65, 67, 207, 212}; // read, readv, pread64, recvfrom, recvmsg
        default -> new int[]{0, 19, 17, 45, 47};           // x86-64: read, readv, pread64, recvfrom, recvmsg
    };

    /**
     * The threads of process {@code pid}, or null when they cannot be read: the process is gone,
     * or its system calls are hidden from the simulator (no ptrace access).
     */
    static List<Thread> of(int pid) {
        List<Thread> out = new ArrayList<>(4);
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Integer.toString(pid), "task"))) {
            for (Path t : tasks) out.add(thread(t));
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return out;
    }

    /**
     * One thread's state. The kernel shows a thread's system call only while it is blocked in one, and "running"
     * otherwise: a thread woken (by our answer, say) between the reads of its stat and its syscall line shows asleep
     * in the first and running in the second, and is taken as running, not as asleep outside verbs (which would let
     * time move under it).
     */
    private static Thread thread(Path t) throws IOException {
        int tid = Integer.parseInt(t.getFileName().toString());
        String stat = Files.readString(t.resolve("stat"));
        char state = stat.charAt(stat.lastIndexOf(')') + 2);
        if (state != 'S') return new Thread(tid, state, -1);
        String syscall = Files.readString(t.resolve("syscall"));
        return syscall.startsWith("running") ? new Thread(tid, 'R', -1) : new Thread(tid, state, readingFd(syscall));
    }

    /**
     * How many times thread {@code tid} of process {@code pid} has been given a CPU (the third figure of its
     * schedstat), or -1 when it cannot be read: a thread whose count has not moved has not run since.
     */
    static long timesRun(int pid, int tid) {
        try {
            String[] f = Files.readString(Path.of("/proc", Integer.toString(pid), "task", Integer.toString(tid),
                    "schedstat")).trim().split(" ");
            return f.length < 3 ? -1 : Long.parseLong(f[2]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The file a sleeping thread reads, from its /proc syscall line ("nr arg0 arg1 ... sp pc"), or -1. */
    static int readingFd(String syscall) {
        String[] f = syscall.trim().split(" ");
        if (f.length < 2 || f[0].equals("running")) return -1;
        int nr = Integer.parseInt(f[0]);
        for (int r : READS)
            if (r == nr) return (int) Long.parseLong(f[1].startsWith("0x") ? f[1].substring(2) : f[1], 16);
        return -1;
    }
}
