package nicsim.firmware;

import nicsim.abi.Cqe64;
import nicsim.fabric.Fabric;
import nicsim.profile.Profile;
import nicsim.profile.Require;

/**
 * Everything the {@link Firmware} takes from the profile, read and checked once as it is made: the processor's cycles
 * per WQE and per packet ({@code fw.*}), ACK coalescing, receive-ring prefetch, the largest message, a command's
 * latency, the host's page size, whether {@code link.transmit} is cut-through, the port's rate and MTU as PortInfo
 * reports them, the largest translation page ({@code mtt.page.max}, 0: none), the receive a CQE may hold
 * ({@code cqe.scatter.max}, 0: none), UMR's cycles per KLM entry ({@code umr.klm.cycles}, -1: no indirect mkeys), how
 * translations are filled, and DC's and tag matching's parameters (null: the profile offers none). What the adapter's
 * blocks hold (queue tables, the doorbell window) the firmware reads from {@link nicsim.adapter.AdapterConfig}.
 */
public record FirmwareConfig(long wqeCycles, long packetCycles, int ackCoalesce, int recvPrefetch, long maxMsgBytes,
        long commandLatencyPs, long hostPageBytes, boolean cutThroughTx, long linkBitsPerSecond, int linkMtuBytes,
        long mttPageMaxBytes, int cqeScatterMaxBytes, long umrKlmCycles, MttFill.Config mttFill, Dc dc, Tm tm) {
    public FirmwareConfig {
        Require.atLeast("fw.wqe.cycles", wqeCycles, 0, "cycles");
        Require.atLeast("fw.packet.cycles", packetCycles, 0, "cycles");
        Require.atLeast("fw.ack.coalesce", ackCoalesce, 1, "");
        Require.atLeast("fw.recv.prefetch", recvPrefetch, 0, "");
        Require.range("fw.max.msg.size", maxMsgBytes, 1, 1L << 31, "B"); // IBTA: a message is at most 2^31 bytes
        Require.atLeast("fw.command.latency", commandLatencyPs, 0, "ps");
        Require.powerOfTwo("host.page.size", hostPageBytes, 64, 1L << 30, "B");
        Require.atLeast("link.rate", linkBitsPerSecond, 1, "b/s");
        Require.powerOfTwo("link.mtu", linkMtuBytes, 256, 4096, "B");
        Require.atLeast("mtt.page.max", mttPageMaxBytes, 0, "B");
        // a 64-byte CQE holds 32 bytes of data
        Require.range("cqe.scatter.max", cqeScatterMaxBytes, 0, Cqe64.INLINE_SCATTER_BYTES, "B");
        Require.atLeast("umr.klm.cycles", umrKlmCycles, -1, "cycles");
    }

    /**
     * DC transport's {@code dc.*}: a target's pool of responders, a full (else half) handshake, an initiator's idle
     * timeout, the wait after a CNAK, when an idle responder may be taken back (times in ps).
     */
    record Dc(int dcrPool, boolean fullHandshake, long idleTimeout, long cnakBackoff, long dcrTimeout) {
        Dc {
            Require.atLeast("dc.dcr.pool", dcrPool, 1, "");
            Require.atLeast("dc.idle.timeout", idleTimeout, 0, "ps");
            Require.atLeast("dc.cnak.backoff", cnakBackoff, 0, "ps");
            Require.atLeast("dc.dcr.timeout", dcrTimeout, 0, "ps");
        }

        static Dc from(Profile p) {
            boolean full = Require.oneOf("dc.handshake", p.text("dc.handshake"), "half", "full") == 1;
            return new Dc(p.countInt("dc.dcr.pool"), full, p.picos("dc.idle.timeout"), p.picos("dc.cnak.backoff"),
                    p.picos("dc.dcr.timeout"));
        }
    }

    /**
     * Tag matching's {@code tm.*}: list size, outstanding operations, cycles per entry compared, an operation's
     * latency (ps).
     */
    public record Tm(int maxTags, int maxOps, long matchCycles, long opLatency) {
        public Tm {
            Require.atLeast("tm.max.tags", maxTags, 1, "");
            Require.atLeast("tm.max.ops", maxOps, 1, "");
            Require.atLeast("tm.match.cycles", matchCycles, 0, "cycles");
            Require.atLeast("tm.op.latency", opLatency, 0, "ps");
        }

        static Tm from(Profile p) {
            return new Tm(p.countInt("tm.max.tags"), p.countInt("tm.max.ops"), p.cycles("tm.match.cycles"),
                    p.picos("tm.op.latency"));
        }
    }

    public static FirmwareConfig from(Profile p) {
        return new FirmwareConfig(p.cycles("fw.wqe.cycles"), p.cycles("fw.packet.cycles"),
                p.countInt("fw.ack.coalesce"), p.countInt("fw.recv.prefetch"), p.bytes("fw.max.msg.size"),
                p.picos("fw.command.latency"), p.bytes("host.page.size"), Fabric.cutThrough(p, "link.transmit"),
                p.bitsPerSecond("link.rate"), p.bytesInt("link.mtu"),
                p.has("mtt.page.max") ? p.bytes("mtt.page.max") : 0,
                p.has("cqe.scatter.max") ? p.bytesInt("cqe.scatter.max") : 0,
                p.has("umr.klm.cycles") ? p.cycles("umr.klm.cycles") : -1, MttFill.Config.from(p),
                p.has("dc.dcr.pool") ? Dc.from(p) : null, p.has("tm.max.tags") ? Tm.from(p) : null);
    }
}
