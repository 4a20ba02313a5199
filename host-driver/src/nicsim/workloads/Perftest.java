package nicsim.workloads;

import java.io.PrintStream;
import nicsim.verbs.Mtu;
import nicsim.verbs.WrOpcode;

/** What perftest's tests share: the sizes a run measures, its table's header and rule, UD's limits. */
final class Perftest {
    private Perftest() {}

    static long[] sizes(Options o, long dflt) {
        if (!o.allSizes()) return new long[]{o.size() > 0 ? o.size() : dflt};
        long[] s = new long[23];
        for (int i = 0; i < 23; i++) s[i] = 2L << i; // perftest -a: 2 B .. 8 MiB
        return s;
    }

    static final String LINE = "-".repeat(87);

    /** Bytes a UD receive buffer keeps before the message: room for the 40-byte GRH (ibv_post_recv(3)). */
    static final int GRH = 40;

    /** Refuses, naming why, a UD run perftest has not ({@code verb} not SEND) or a message past one packet. */
    static void udFits(String name, WrOpcode verb, long size, Mtu mtu) {
        if (verb != WrOpcode.SEND) throw new IllegalArgumentException(name + " over UD: perftest has no such test");
        if (size > mtu.bytes())
            throw new IllegalArgumentException("size " + size + " is larger than the path MTU " + mtu.bytes()
                    + " (a UD message is one packet)");
    }

    static void header(PrintStream out, String name, Options o, boolean lat) {
        out.println(LINE);
        out.printf("                    %s (nicsim, simulated time)%n",
                name.replace('_', ' ').toUpperCase().replace(" ", " ").trim());
        out.printf(" Number of qps   : %d\t\tTransport type : IB%n", o.qps());
        out.printf(" Connection type : %s%n", o.ud() ? "UD" : "RC");
        out.printf(" TX depth        : %d%n", lat ? 1 : o.txDepth());
        out.printf(" Mtu             : %d[B]%n", o.mtu().bytes());
        out.println(LINE);
        if (lat)
            out.println(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
                    + "    99% percentile[usec]");
        else out.println(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]");
    }
}
