package nicsim.driver;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import nicsim.abi.Cmd;
import nicsim.abi.CmdTable;
import nicsim.abi.Cqe64;
import nicsim.abi.DoorbellRecord;
import nicsim.abi.Eqe64;
import nicsim.abi.QpModifyMask;
import nicsim.abi.QpTransitions;
import nicsim.abi.QpcState;
import nicsim.abi.ServiceType;
import nicsim.abi.UarLayout;
import nicsim.abi.WqeFormat;
import nicsim.abi.WqeLayout;
import nicsim.fabric.Faults;
import nicsim.host.ConfigSpace;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import nicsim.sim.Layout;

/**
 * The tables of the driver writer's manual (docs/device.md), made from the device's own ABI code:
 * config space, registers, the command set with each mailbox's fields, statuses and syndromes, WQE
 * and CQE opcodes, error syndromes, each queue entry's fields, the QP transition table, and a
 * profile's limits. The page keeps each table between markers; {@link #main} rewrites them and a
 * test checks the page holds what this class makes, so the manual cannot drift from the code.
 */
public final class DeviceManual {
    private DeviceManual() {}

    private static final Pattern BLOCK = Pattern.compile(
            "(<!-- generated: ([a-z-]+) -->\\n)(.*?)(<!-- end of generated: \\2 -->)", Pattern.DOTALL);

    /** Every generated table, by name. */
    public static Map<String, String> sections() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("config", config());
        s.put("registers", registers());
        s.put("entry", entry());
        s.put("commands", commands());
        s.put("statuses", statuses());
        s.put("syndromes", syndromes());
        s.put("wqe-opcodes", constants(WqeLayout.class, "OP_", "0x%02x"));
        s.put("umr-layout", umrLayout());
        s.put("cqe-opcodes", cqeOpcodes());
        s.put("cqe-syndromes", cqeSyndromes());
        s.put("queue-fields", queueFields());
        s.put("transitions", transitions());
        s.put("limits", limits(Profiles.load("cx-gen3x16")));
        return s;
    }

    /** {@code page} with every generated block replaced by what this class makes now. */
    public static String render(String page) { return render(page, sections()); }

    /**
     * {@code page} with each block between {@code <!-- generated: NAME -->} and {@code <!-- end of
     * generated: NAME -->} replaced by {@code s}'s text for NAME (a name it lacks is an error).
     */
    public static String render(String page, Map<String, String> s) {
        Matcher m = BLOCK.matcher(page);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String body = s.get(m.group(2));
            if (body == null) throw new IllegalArgumentException("docs/device.md: no generated table '"
                    + m.group(2) + "'");
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + body + m.group(4)));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The names of the generated blocks {@code page} holds. */
    public static List<String> blocks(String page) {
        List<String> out = new ArrayList<>();
        for (Matcher m = BLOCK.matcher(page); m.find(); ) out.add(m.group(2));
        return out;
    }

    /** Rewrites the generated tables of the page at args[0] (default docs/device.md). */
    public static void main(String[] args) throws IOException {
        Path page = Path.of(args.length > 0 ? args[0] : "docs/device.md");
        Files.writeString(page, render(Files.readString(page)));
    }

    private static String hex(long v) { return String.format("0x%x", v); }

    private static String config() {
        return table(List.of("offset", "field", "value / use"), List.of(
                row(hex(ConfigSpace.VENDOR_ID), "vendor ID", hex(Cmd.PCI_VENDOR)),
                row(hex(ConfigSpace.DEVICE_ID), "device ID", hex(Cmd.PCI_DEVICE)),
                row(hex(ConfigSpace.COMMAND), "command", "set memory space (" + hex(ConfigSpace.CMD_MEMORY_SPACE)
                        + ") and bus master (" + hex(ConfigSpace.CMD_BUS_MASTER) + ") before any MMIO or DMA"),
                row(hex(ConfigSpace.BAR0), "BAR0 (64-bit, prefetchable; 32-bit, non-prefetchable when the PCI "
                        + "face's driver opens it so)", "write all ones, read back the size mask, then write the base: "
                        + "the size is the profile's pci.bar0.size; the low four bits say which kind (0xc: 64-bit "
                        + "prefetchable, "
                        + "its upper half at " + hex(ConfigSpace.BAR0 + 4) + "; 0: 32-bit, and "
                        + hex(ConfigSpace.BAR0 + 4) + " reads 0)"),
                row(hex(ConfigSpace.CAP_PTR), "capabilities pointer", hex(ConfigSpace.MSIX_CAP)),
                row(hex(ConfigSpace.MSIX_CAP), "MSI-X capability (ID " + hex(ConfigSpace.CAP_ID_MSIX) + ")",
                        Cmd.MSIX_VECTORS + " vectors; message control bit 15 enables (" + hex(ConfigSpace.MSIX_ENABLE)
                                + "), bit 14 masks all; the table is in BAR0 at " + hex(Cmd.REG_MSIX_TABLE)
                                + ", 16 bytes a vector (address, data, control); next capability "
                                + hex(ConfigSpace.PCIE_CAP) + " on a PCIe profile (pci.kind \"pcie\"), else none"),
                row(hex(ConfigSpace.PCIE_CAP), "PCI Express capability (ID " + hex(ConfigSpace.CAP_ID_PCIE)
                        + "), PCIe profiles only", "version 2, an endpoint; Device Capabilities ("
                        + hex(ConfigSpace.PCIE_DEVCAP) + ") has Function Level Reset capable (bit 28) and the "
                        + "largest payload (pci.max.payload); Link Capabilities (" + hex(ConfigSpace.PCIE_LNKCAP)
                        + ") and Link Status the profile's lane rate and lanes; writing bit 15 of Device Control ("
                        + hex(ConfigSpace.PCIE_DEVCTL) + ") resets the function (Function-level reset, below)")));
    }

    private static String registers() {
        return table(List.of("BAR0 offset", "register", "access"), List.of(
                row(hex(Cmd.REG_FW_REV), "firmware revision (major << 16 | minor, now " + hex(Cmd.FW_REV) + ")",
                        "read 4"),
                row(hex(Cmd.REG_CMDQ_ADDR), "host address of the 64-byte command entry", "write 8, big-endian"),
                row(hex(Cmd.REG_CMD_DOORBELL), "command doorbell: execute the entry", "write 4"),
                row(hex(Cmd.REG_CMD_ERRORS), "commands refused as malformed (entry, opcode or length)", "read 4"),
                row(hex(Cmd.REG_HEALTH), "0 while healthy", "read 4"),
                row(hex(Cmd.REG_XLATE_VECTOR), "MSI-X vector for translation misses the host fills", "write 4"),
                row(hex(Cmd.REG_XLATE_MISS), "oldest translation miss: bit 63 set, MTT index below; 0 if none",
                        "read 8, big-endian"),
                row(hex(Cmd.REG_XLATE_FILL), "answer the oldest miss: MTT index, then its 8-byte entry",
                        "write 16, big-endian"),
                row(hex(Cmd.REG_MSIX_TABLE), "MSI-X table (vector 0: the async event queue)", "write 16 per vector"),
                row("UAR page + " + hex(UarLayout.CQ_DOORBELL), "CQ arm doorbell: (sn << 28 | cmd | ci), then the CQN; "
                        + "cmd " + hex(UarLayout.CQ_ARM_SOLICITED) + " arms for solicited completions only",
                        "write 8, big-endian"),
                row("UAR page + " + hex(UarLayout.BF_OFFSET), UarLayout.BF_REGS
                        + " BlueFlame registers: a send doorbell "
                        + "(the ctrl segment's first 8 bytes) or a lone WQE whole, up to bfSize, in one write",
                        "write 8, or 64 to bfSize")));
    }

    private static String entry() {
        return table(List.of("byte", "field"), List.of(
                row(Integer.toString(Cmd.ENTRY_OPCODE), "opcode (4 bytes, big-endian)"),
                row(Integer.toString(Cmd.ENTRY_IN_LEN), "input mailbox length in bytes (4)"),
                row(Integer.toString(Cmd.ENTRY_IN_ADDR), "input mailbox host address (8)"),
                row(Integer.toString(Cmd.ENTRY_OUT_ADDR), "output mailbox host address (8)"),
                row(Integer.toString(Cmd.ENTRY_OUT_LEN), "output mailbox length in bytes (4)"),
                row(Integer.toString(Cmd.ENTRY_TOKEN), "token (4), free for the driver"),
                row(Integer.toString(Cmd.ENTRY_OWNER), "ownership: " + Cmd.OWNER_HW + " while the adapter owns the "
                        + "entry; the adapter clears it last, after the output mailbox")));
    }

    private static String fields(Layout<?> l) {
        if (l.fields().isEmpty()) return "(none)";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < l.fields().size(); i++) {
            var f = l.fields().get(i);
            b.append(i == 0 ? "" : ", ").append(i).append(": ").append(f.name()).append(" (").append(f.width())
                    .append(')');
        }
        return b.toString();
    }

    private static String commands() {
        List<List<String>> rows = new ArrayList<>();
        for (CmdTable.Command c : CmdTable.ALL)
            rows.add(row(hex(c.opcode()), c.name(), c.does(), fields(c.in()), fields(c.out())));
        return table(List.of("opcode", "command", "does", "input words: field (bits)", "output words after the header"),
                rows);
    }

    private static String statuses() {
        List<List<String>> rows = new ArrayList<>();
        for (Cmd.Status s : Cmd.Status.values()) rows.add(row(hex(s.code), s.name(), Integer.toString(s.errno)));
        return table(List.of("status", "name", "errno a driver returns"), rows);
    }

    private static String syndromes() {
        List<List<String>> rows = new ArrayList<>();
        for (Cmd.Syndrome s : Cmd.Syndrome.values())
            rows.add(row(Integer.toString(s.ordinal()), s.name(), s.text, s.status.name()));
        return table(List.of("syndrome", "name", "meaning", "status"), rows);
    }

    /** The static int constants of {@code c} named {@code prefix}*, by name less the prefix, in declaration order. */
    static Map<String, Integer> constants(Class<?> c, String prefix) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Field f : c.getDeclaredFields()) {
            boolean named = f.getType() == int.class && f.getName().startsWith(prefix);
            if (!Modifier.isStatic(f.getModifiers()) || !named) continue;
            try {
                out.put(f.getName().substring(prefix.length()), f.getInt(null));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    /** The int constant {@code name} of {@code c}. */
    static int field(Class<?> c, String name) {
        try {
            return c.getField(name).getInt(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@link #constants} as a table of value (in {@code format}) and name. */
    private static String constants(Class<?> c, String prefix, String format) {
        List<List<String>> rows = new ArrayList<>();
        constants(c, prefix).forEach((name, v) -> rows.add(row(String.format(format, v), name)));
        return table(List.of("value", "name"), rows);
    }

    /** A layout UMR's WQE (opcode UMR, WqeFormat's encoding): segment by segment, by byte of the WQE. */
    private static String umrLayout() {
        int at = WqeFormat.OPMOD_MKEY_LAYOUT_AT, zero = WqeFormat.OPMOD_MKEY_LAYOUT, seg = WqeLayout.CTRL_BYTES;
        return table(List.of("bytes", "field"), List.of(
                row(Integer.toString(WqeLayout.CTRL_OPMOD), "opmod: " + zero + " a zero-based layout, " + at
                        + " a layout with a start address (0: a window bind)"),
                row(bytes(WqeLayout.CTRL_IMM, 4), "the indirect mkey, its key byte the one the mkey answers to from "
                        + "now on"),
                row(bytes(seg + WqeFormat.UMR_ACCESS, 4), "access flags of the key (local write, remote write, read, "
                        + "atomic)"),
                row(bytes(seg + WqeFormat.UMR_REPEAT, 4), "repeat count: 0 a list, n an interleaved layout taken n "
                        + "times"),
                row(bytes(seg + WqeFormat.UMR_ENTRIES, 2), "entry count"),
                row(bytes(seg + WqeFormat.UMR_START, 8) + " (opmod " + at + ")", "start: the key's first VA"),
                row(bytes(seg + WqeFormat.UMR_LENGTH, 8) + " (opmod " + at + ")", "length: the key's bytes, 1 up to "
                        + "the entries' total; "
                        + "start + length - 1 must not wrap past 2^64"),
                row("then 16 each", "entries: byte count (list) or stride and byte count in 16 bits each "
                        + "(interleaved), lkey, address; at most " + WqeFormat.MAX_LAYOUT_ENTRIES
                        + " (opmod " + zero + ") or " + WqeFormat.MAX_LAYOUT_AT_ENTRIES
                        + " (opmod " + at + ")")));
    }

    /**
     * One queue entry or segment as the device's ABI classes declare it: its C name prefix, what it is, and its
     * fields' byte offsets (and marks) by name. {@link #QUEUE_FORMATS} lists each WQE segment, the CQE, the EQE and
     * the doorbell record; DeviceHeader gives every field to the C drivers as NICSIM_{prefix}{name}, and the
     * queue-fields table lists them, from that one list.
     */
    record QueueFormat(String prefix, String what, Map<String, Integer> fields) {}

    /** The CQE's fields, as {@link Cqe64} names their byte offsets, in the entry's order. */
    static final List<String> CQE_FIELDS = List.of("TAG", "ERR_ADDR", "STRIDE", "PRIV", "ERR_KEY", "ERR_PSN", "SLID",
            "SRC_QP", "SRQN", "IMM", "ERR_PIECE", "APP", "APP_OP", "APP_INFO", "BYTE_CNT", "TIMESTAMP",
            "VENDOR_SYNDROME", "SYNDROME", "SOP_QPN", "WQE_COUNTER", "OP_OWN");

    static final List<QueueFormat> QUEUE_FORMATS = List.of(
            new QueueFormat("WQE_CTRL_SEG_", "a send WQE's control segment",
                    constants(WqeLayout.class, "CTRL_")),
            new QueueFormat("WQE_XRC_SEG_", "the XRC segment (XRC QPs)", constants(WqeFormat.class, "XRC_")),
            new QueueFormat("AV_", "the address vector (UD QPs, DC initiators): fields, size, the QPN's and GRH's "
                    + "bits", constants(WqeFormat.class, "AV_")),
            new QueueFormat("WQE_RADDR_SEG_", "the remote-address segment (RDMA, atomics, window binds)",
                    constants(WqeFormat.class, "RADDR_")),
            new QueueFormat("WQE_ATOMIC_SEG_", "the atomic segment (atomics, window binds)",
                    constants(WqeFormat.class, "ATOMIC_")),
            new QueueFormat("WQE_DATA_SEG_", "a data segment (send and receive WQEs)",
                    constants(WqeFormat.class, "DATA_")),
            new QueueFormat("WQE_INLINE_SEG_", "the inline segment and its byte count's flag",
                    constants(WqeFormat.class, "INLINE_")),
            new QueueFormat("WQE_UMR_SEG_", "a layout UMR's segment, after the control segment",
                    constants(WqeFormat.class, "UMR_")),
            new QueueFormat("WQE_KLM_", "a layout UMR's entry", constants(WqeFormat.class, "KLM_")),
            new QueueFormat("CQE_", "a CQE", named(Cqe64.class, CQE_FIELDS)),
            new QueueFormat("EQE_", "an EQE, and its owner byte's mark of a written entry",
                    constants(Eqe64.class, "")),
            new QueueFormat("DBREC_", "a doorbell record: a QP's (or SRQ's) counters, a CQ's consumer counter and "
                    + "arm word", constants(DoorbellRecord.class, "")));

    /** The int constants {@code names} of {@code c}, in that order. */
    private static Map<String, Integer> named(Class<?> c, List<String> names) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (String n : names) m.put(n, field(c, n));
        return m;
    }

    /** Bytes {@code at} to {@code at + n - 1}, as the manual writes a field's place. */
    private static String bytes(int at, int n) { return at + ".." + (at + n - 1); }

    /** The CQE opcodes a driver meets, as {@link Cqe64} names them. */
    static final List<String> CQE_OPCODES = List.of("REQ", "RESP_WR_IMM", "RESP_SEND", "RESP_SEND_IMM", "RESP_SEND_INV",
            "REQ_ERR", "RESP_ERR", "INVALID");

    private static String cqeOpcodes() {
        List<List<String>> rows = new ArrayList<>();
        for (String n : CQE_OPCODES) rows.add(row(Integer.toString(field(Cqe64.class, n)), n));
        return table(List.of("op_own bits 7..4", "CQE opcode"), rows);
    }

    /**
     * The error syndromes and the ibv_wc_status each stands for: the status named as the syndrome is, the verbs
     * library's rule (its DeviceCodes, whose test holds every syndrome to it).
     */
    private static String cqeSyndromes() {
        List<List<String>> rows = new ArrayList<>();
        constants(Cqe64.class, "SYNDROME_").forEach((name, v) ->
                rows.add(row(String.format("0x%02x", v), name, name)));
        return table(List.of("byte 55", "error syndrome", "ibv_wc_status"), rows);
    }

    /** Every queue entry's fields (QUEUE_FORMATS): the entry, the C name, the byte offset (or the mark's value). */
    private static String queueFields() {
        List<List<String>> rows = new ArrayList<>();
        for (QueueFormat f : QUEUE_FORMATS)
            f.fields().forEach((name, v) -> rows.add(row(f.what(), "NICSIM_" + f.prefix() + name,
                    v < 0 || v > 255 ? String.format("0x%x", v) : Integer.toString(v))));
        return table(List.of("entry", "name", "byte (or value)"), rows);
    }

    private static String transitions() {
        List<List<String>> rows = new ArrayList<>();
        for (ServiceType t : List.of(ServiceType.RC, ServiceType.UC, ServiceType.UD))
            for (QpcState cur : QpcState.values())
                for (QpcState next : QpcState.values())
                    if (QpTransitions.valid(cur, next, t, null))
                        rows.add(row(t.name(), cur + " -> " + next,
                                attributes(QpTransitions.required(cur, next, t)),
                                attributes(QpTransitions.optional(cur, next, t))));
        return table(List.of("type", "transition", "attributes required", "attributes taken"), rows);
    }

    /** A mask's attribute names, a comma between two so that a line may break there. */
    private static String attributes(int mask) { return QpModifyMask.names(mask).replace("|", ", "); }

    /** What QUERY_HCA_CAP answers on an adapter of profile {@code p}. */
    static String limits(Profile p) {
        World w = new World(1, p, 1, Faults.NONE);
        Cmd.HcaCap c = w.host(0).driver().caps();
        return table(List.of("QUERY_HCA_CAP field", p.name()), List.of(
                row("maxQp", Long.toString(c.maxQp())), row("maxCq", Long.toString(c.maxCq())),
                row("maxMkey", Long.toString(c.maxMkey())), row("maxPd", Long.toString(c.maxPd())),
                row("maxUar", Long.toString(c.maxUar())), row("maxQpWr", Long.toString(c.maxQpWr())),
                row("maxCqe", Long.toString(c.maxCqe())), row("maxSge", Long.toString(c.maxSge())),
                row("maxInline", Long.toString(c.maxInline())), row("maxMtu (IB enum)", Long.toString(c.maxMtu())),
                row("maxRdAtomic", Long.toString(c.maxRdAtomic())), row("maxMsgSize", Long.toString(c.maxMsgSize())),
                row("maxDm", Long.toString(c.maxDm())),
                row("uarBase (BAR0 offset of UAR page 0)", "0x" + Long.toHexString(c.uarBase())),
                row("uarPageSize", Long.toString(c.uarPageSize())),
                row("dmBase (BAR0 offset of device memory)", "0x" + Long.toHexString(c.dmBase())),
                row("bfSize (largest WQE a send doorbell carries whole)", c.bfSize() + " B"),
                row("maxPageShift (largest translation page to register pinned memory in)",
                        c.maxPageShift() >= 20 ? (1L << c.maxPageShift() - 20) + " MiB"
                                : (1L << c.maxPageShift() - 10) + " KiB"),
                row("smLid (the subnet manager's LID: PortInfo.MasterSMLID)", Long.toString(c.smLid())),
                row("nodeGuid (node 0's; node n's is this + n)", String.format("0x%016x", c.nodeGuid())),
                row("WQEBB, largest WQE", WqeLayout.WQEBB + " B, "
                        + WqeLayout.MAX_WQEBBS + " WQEBBs")));
    }

    private static List<String> row(String... cells) { return List.of(cells); }

    /** The longest line the manual's pages hold (the house rule): a table wider than this is written as a list. */
    public static final int WIDTH = 120;

    /** A line break inside a list item may not start a line with these: Markdown would read a list or heading. */
    private static final Pattern MARKER = Pattern.compile("[-+*>#=]+|\\d+[.)]");

    /**
     * A markdown table of {@code rows} under {@code head} (a cell's "|" escaped) when every line fits in
     * {@link #WIDTH}; else {@link #list}.
     */
    public static String table(List<String> head, List<List<String>> rows) {
        StringBuilder b = new StringBuilder("| ").append(String.join(" | ", head)).append(" |\n|");
        for (int i = 0; i < head.size(); i++) b.append("---|");
        b.append('\n');
        for (List<String> r : rows) {
            List<String> cells = r.stream().map(c -> c.replace("|", "\\|").replace("\n", " ")).toList();
            b.append("| ").append(String.join(" | ", cells)).append(" |\n");
        }
        String t = b.toString();
        return t.lines().allMatch(l -> l.length() <= WIDTH) ? t : list(head, rows);
    }

    /**
     * {@code rows} as a list under a line that names the columns, an item a row wrapped to {@link #WIDTH}: the first
     * cell in bold, then the second, the third after a colon, and each further one after its column's name.
     */
    static String list(List<String> head, List<List<String>> rows) {
        StringBuilder b = new StringBuilder();
        List<String> named = head.stream().skip(3).map(h -> "*" + h + "*").toList();
        String more = named.isEmpty() ? "" : ", then " + String.join(" and ", named)
                + (named.size() == 1 ? " after its name" : ", each after its name");
        wrap(b, "", "", "Each item: " + item(head, head.subList(0, Math.min(3, head.size()))) + more + ".");
        b.append('\n');
        for (List<String> r : rows) wrap(b, "- ", "  ", item(head, r));
        return b.toString();
    }

    private static String item(List<String> head, List<String> r) {
        StringBuilder b = new StringBuilder("**").append(r.get(0)).append("**");
        for (int i = 1; i < r.size(); i++) {
            String before = i == 1 ? (r.size() == 2 ? ": " : " ") : i == 2 ? ": " : "; *" + head.get(i) + "*: ";
            b.append(before).append(r.get(i));
        }
        return b.toString().replace("\n", " ");
    }

    /**
     * Appends {@code text} after {@code first}, broken at spaces into lines of at most {@link #WIDTH}, each line
     * after the first begun with {@code indent}.
     */
    private static void wrap(StringBuilder b, String first, String indent, String text) {
        StringBuilder line = new StringBuilder(first);
        for (String word : text.split(" +")) {
            boolean fresh = line.length() == first.length() || line.toString().equals(indent);
            boolean fits = line.length() + 1 + word.length() <= WIDTH;
            if (fresh) line.append(word);
            else if (fits || MARKER.matcher(word).matches()) line.append(' ').append(word);
            else {
                b.append(line).append('\n');
                line = new StringBuilder(indent).append(word);
            }
        }
        b.append(line).append('\n');
    }
}
