package nicsim.verbs;

import java.util.Arrays;
import nicsim.abi.Cmd;
import nicsim.adapter.OnChipMemory;
import nicsim.driver.Driver;
import nicsim.host.PciBus;

/**
 * Device memory (ibv_dm): bytes of the adapter's on-chip memory. The host writes and reads them
 * through a window of BAR0 ({@link #memcpyToDm}: posted MMIO writes; {@link #memcpyFromDm}: MMIO
 * reads, each a round trip); a region registered over them ({@link ProtectionDomain#regDmMr}) is
 * reached by RDMA at the chip's SRAM timing, with no PCIe crossing at the responder.
 */
public final class DeviceMemory extends VerbsObject {
    final Context ctx;
    private final long offset, length;
    /** Regions registered over it: it is not freed under them. */
    int regions;

    DeviceMemory(Context ctx, long length, int logAlignReq) {
        super(ctx);
        this.ctx = ctx;
        long max = ctx.driver.caps().maxDm();
        if (max == 0)
            throw new VerbsException(Errno.EOPNOTSUPP,
                    "allocDm: profile " + ctx.driver.host().profile.name() + " has no device memory");
        if (length <= 0 || length > max)
            throw new VerbsException(Errno.EINVAL, "allocDm length " + length + " must be 1.." + max);
        if (logAlignReq < 0 || logAlignReq > 20)
            throw new VerbsException(Errno.EINVAL, "allocDm logAlignReq " + logAlignReq + " must be 0..20");
        this.length = length;
        this.offset = DriverCommand.run(ctx.driver, Cmd.ALLOC_DM, Cmd.ALLOC_DM_IN, new Cmd.AllocDm(length, logAlignReq),
                Cmd.HANDLE).handle();
        made();
    }

    public long length() { return length; }

    /**
     * The physical address of byte 0 (in the adapter's device-memory aperture): what a region over it translates
     * to.
     */
    long physical() { return OnChipMemory.BASE + offset; }

    private void checkRange(String verb, long at, long n) {
        checkOpen();
        if ((at & 3) != 0 || (n & 3) != 0) // the window is written and read 4 bytes at a time, as mlx5's
            throw new VerbsException(Errno.EINVAL,
                    String.format("%s offset %d and length %d must be multiples of 4", verb, at, n));
        if (at < 0 || n < 0 || at > length - n)
            throw new VerbsException(Errno.EINVAL,
                    String.format("%s of %d bytes at %d is outside the %d bytes allocated", verb, n, at, length));
    }

    /** ibv_memcpy_to_dm: {@code data} into the device memory at {@code at}, as posted writes through BAR0. */
    public void memcpyToDm(long at, byte[] data) {
        checkRange("memcpyToDm", at, data.length);
        long window = ctx.driver.bar0() + ctx.driver.host().adapter.deviceMemoryWindow() + offset + at;
        for (int i = 0; i < data.length; i += 64) // write-combined 64-byte bursts, as a CPU sends them
            ctx.driver.host().bus.mmioWrite(window + i, Arrays.copyOfRange(data, i, Math.min(data.length, i + 64)));
    }

    /**
     * ibv_memcpy_from_dm: {@code n} bytes of the device memory from {@code at}, read through BAR0 (it waits for
     * them).
     */
    public byte[] memcpyFromDm(long at, int n) {
        checkRange("memcpyFromDm", at, n);
        long window = ctx.driver.bar0() + ctx.driver.host().adapter.deviceMemoryWindow() + offset + at;
        byte[] out = new byte[n];
        int[] left = {0};
        for (int i = 0; i < n; i += 64) {
            int from = i, len = Math.min(64, n - i);
            left[0]++;
            ctx.driver.host().bus.mmioRead(window + i, len, (PciBus.MmioReadResult r) -> {
                System.arraycopy(r.data(), 0, out, from, len);
                left[0]--;
            });
        }
        ctx.driver.host().sim.runUntil(() -> left[0] == 0, Driver.COMMAND_TIMEOUT);
        return out;
    }

    @Override protected String describe() { return String.format("DeviceMemory(%d bytes at %d)", length, offset); }

    @Override protected void destroy() {
        if (regions > 0)
            throw new VerbsException(Errno.EBUSY, describe() + " still has " + regions + " regions over it");
        DriverCommand.run(ctx.driver, Cmd.DEALLOC_DM, Cmd.HANDLE, new Cmd.Handle(offset), Cmd.EMPTY);
    }
}
