package nicsim.serve;

import java.io.PrintStream;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.function.LongPredicate;
import nicsim.driver.Host;
import nicsim.driver.World;
import nicsim.firmware.Firmware;

/**
 * Reports a program's QP whose requester keeps retrying (ACK timeouts, RNR NAKs with rnr_retry 7,
 * DC CNAKs) with no progress for a while of simulated time: a livelock the program may never see,
 * since an infinite RNR retry never completes in error. Each stall is reported once, naming the
 * program, node, QP and cause; the QP goes on as the program asked.
 */
final class Watchdog {
    /** Simulated time of retries without progress before a stall is reported: 1 s. */
    static final long DEFAULT_PICOS = 1_000_000_000_000L;
    /** How often (simulated) the QPs are looked at. */
    private static final long EVERY_PICOS = 10_000_000_000L;

    private final World world;
    private final long picos;
    private final PrintStream log;
    private final Set<String> reported = new HashSet<>();
    private long nextLook, stalls;

    Watchdog(World world, long picos, PrintStream log) {
        this.world = world;
        this.picos = picos;
        this.log = log;
    }

    /** Looks at the programs' QPs, once every {@link #EVERY_PICOS} of simulated time. */
    void look(Collection<Program> programs) {
        if (picos <= 0 || world.now() < nextLook) return;
        nextLook = world.now() + EVERY_PICOS;
        for (Program p : programs) {
            for (Session s : p.sessions) if (s.fatal == null) look(p, s.host, s::ownsQp);
            for (PciDevice d : p.devices.values()) // a C driver's
                if (d.user != null && d.fatal == null) look(p, d.host, d.user::ownsQp);
        }
    }

    /** Reports each QP of program {@code p} on {@code host} ({@code owns} says which) stalled for the limit. */
    private void look(Program p, Host host, LongPredicate owns) {
        for (Firmware.Stall st : host.firmware.stalls(picos)) {
            if (!owns.test(st.qpn())) continue;
            String key = host.index + ":" + st.qpn() + ":" + (world.now() - st.picos());
            if (!reported.add(key)) continue;
            stalls++;
            log.printf("nicsim serve: watchdog: %s's QP 0x%x on node %d has retried %d times over %.3f ms of simulated "
                    + "time with no progress (last: %s)%n", p, st.qpn(), host.index, st.retries(), st.picos() / 1e9,
                    st.lastRetry());
        }
    }

    void summary(PrintStream out) {
        if (stalls > 0) out.printf("  the watchdog reported %d QPs retrying with no progress (see above)%n", stalls);
    }
}
