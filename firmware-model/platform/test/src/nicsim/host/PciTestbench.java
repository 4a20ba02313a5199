package nicsim.host;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Simulator;

/** A host with one simple function: BAR0 is plain registers; MMIO writes are logged with their arrival time. */
final class PciTestbench {
    record Access(long time, int bar, long offset, byte[] data) {}

    final Simulator sim = new Simulator();
    final Profile profile;
    final HostMemory memory;
    final PciBus bus;
    final Device device = new Device();
    final int fn;

    static final class Device implements PciFunction {
        final ConfigSpace config = new ConfigSpace(0x15b3, 0x1017, 0x02070000, new long[]{1 << 20, 0, 0}, 4, 0, 0x8000);
        final List<Access> writes = new ArrayList<>();
        final byte[] regs = new byte[1 << 20];
        PciPort port;
        @Override public ConfigSpace config() { return config; }
        @Override public void mmioWrite(int bar, long offset, byte[] data) {
            writes.add(new Access(port.simulator().now(), bar, offset, data));
            System.arraycopy(data, 0, regs, (int) offset, data.length);
        }
        @Override public byte[] mmioRead(int bar, long offset, int length) {
            byte[] out = new byte[length];
            System.arraycopy(regs, (int) offset, out, 0, length);
            return out;
        }
        @Override public void connect(PciPort port) { this.port = port; }
    }

    static final long BAR0 = 0xF000_0000L;

    PciTestbench(String profileName) { this(Profiles.load(profileName)); }

    PciTestbench(Profile p) {
        profile = p;
        memory = new HostMemory(1L << 32, 4096);
        bus = new PciBus(sim, PciBus.Config.from(profile), memory);
        fn = bus.attach(device);
    }

    /** What a driver's probe does: place BAR0, enable memory space and bus mastering. */
    PciTestbench enable() {
        bus.configWrite32(fn, ConfigSpace.BAR0, (int) BAR0);
        bus.configWrite32(fn, ConfigSpace.BAR0 + 4, 0);
        bus.configWrite32(fn, ConfigSpace.COMMAND, ConfigSpace.CMD_MEMORY_SPACE | ConfigSpace.CMD_BUS_MASTER);
        return this;
    }
}
