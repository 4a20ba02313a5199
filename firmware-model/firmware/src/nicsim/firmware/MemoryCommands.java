package nicsim.firmware;

import static nicsim.firmware.Commands.handle;
import static nicsim.firmware.Commands.in;
import static nicsim.firmware.Commands.ok;

import java.util.function.Consumer;
import nicsim.abi.Cmd;

/** The commands of memory: keys, windows, device memory, on-demand paging. */
final class MemoryCommands {
    private final Firmware fw;
    private final Commands commands;

    MemoryCommands(Firmware fw, Commands commands) {
        this.fw = fw;
        this.commands = commands;
    }

    /** Runs command {@code opcode}; null when it answers later, through {@code answer}. */
    byte[] execute(int opcode, byte[] input, Consumer<byte[]> answer) {
        return switch (opcode) {
            case Cmd.CREATE_MKEY -> { // answered once the page list is in the translation table
                Cmd.CreateMkey c = in(Cmd.CREATE_MKEY_IN, input);
                commands.checkPd(c.pd());
                Consumer<byte[]> a = answer;
                long[] key = new long[1];
                key[0] = fw.keys.createMr(c, () -> a.accept(handle(key[0])));
                yield null;
            }
            case Cmd.CREATE_IMPLICIT_MKEY -> { // no page list: nothing to copy
                Cmd.CreateMkey c = in(Cmd.CREATE_MKEY_IN, input);
                commands.checkPd(c.pd());
                yield handle(fw.keys.createImplicit(c));
            }
            case Cmd.DESTROY_MKEY -> { fw.keys.destroyMr(in(Cmd.HANDLE, input).handle()); yield ok(); }
            case Cmd.REREG_MKEY -> {
                Cmd.ReregMkey c = in(Cmd.REREG_MKEY_IN, input);
                commands.checkPd(c.to().pd());
                Consumer<byte[]> a = answer;
                fw.keys.reregMr(c, () -> a.accept(ok()));
                yield null;
            }
            case Cmd.CREATE_INDIRECT_MKEY -> {
                Cmd.CreateIndirectMkey c = in(Cmd.CREATE_INDIRECT_MKEY_IN, input);
                commands.checkPd(c.pd());
                yield handle(fw.keys.createIndirect(c));
            }
            case Cmd.ALLOC_MW -> {
                Cmd.AllocMw a = in(Cmd.ALLOC_MW_IN, input);
                commands.checkPd(a.pd());
                yield handle(fw.keys.allocWindow(a));
            }
            case Cmd.DEALLOC_MW -> { fw.keys.deallocWindow(in(Cmd.HANDLE, input).handle()); yield ok(); }
            default -> deviceMemoryAndPaging(opcode, input, answer);
        };
    }

    /** Device memory, and on-demand paging's prefetch and invalidation. */
    private byte[] deviceMemoryAndPaging(int opcode, byte[] input, Consumer<byte[]> answer) {
        return switch (opcode) {
            case Cmd.ALLOC_DM -> {
                Cmd.AllocDm a = in(Cmd.ALLOC_DM_IN, input);
                if (a.length() == 0 || a.length() > fw.adapter.deviceMemory().size())
                    throw new CommandRefused(Cmd.Syndrome.BAD_DM_SIZE, a.length());
                long at = fw.adapter.deviceMemory().allocate(a.length(), (int) a.logAlign());
                if (at < 0) throw new CommandRefused(Cmd.Syndrome.OUT_OF_DM, a.length());
                yield handle(at);
            }
            case Cmd.DEALLOC_DM -> {
                long at = in(Cmd.HANDLE, input).handle();
                if (!fw.adapter.deviceMemory().release(at)) throw new CommandRefused(Cmd.Syndrome.UNKNOWN_DM, at);
                yield ok();
            }
            case Cmd.ODP_PREFETCH -> { fw.keys.prefetch(in(Cmd.ODP_PREFETCH_IN, input), () -> {}); yield ok(); }
            case Cmd.ODP_PREFETCH_FLUSH -> { // answered once the pages are in
                Consumer<byte[]> a = answer;
                fw.keys.prefetch(in(Cmd.ODP_PREFETCH_IN, input), () -> a.accept(ok()));
                yield null;
            }
            case Cmd.ODP_INVALIDATE -> { fw.keys.invalidate(in(Cmd.ODP_PREFETCH_IN, input)); yield ok(); }
            default -> throw new CommandRefused(Cmd.Syndrome.BAD_OPCODE, opcode);
        };
    }
}
