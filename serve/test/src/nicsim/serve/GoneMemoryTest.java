package nicsim.serve;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import nicsim.driver.World;
import nicsim.serve.Transport.Connection;
import org.junit.jupiter.api.Test;

/**
 * Linux removes a killed process's memory before its files close. A C driver whose memory the kernel finds released
 * is let go at serve's next look, as the close of its device file would let it go, rather than have the adapter run
 * its queues on zeros until its sockets' ends reach serve (ChaosTest's flood of "a completion dropped").
 */
class GoneMemoryTest {
    @Test
    void aDriverWhoseMemoryIsReleasedIsLetGoAtTheNextLook() throws Exception {
        Process child = new ProcessBuilder("sleep", "60").start(); // its memory is ours to read: we are its parent
        try {
            int pid = (int) child.pid();
            World w = Served.cluster();
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            List<Program> left = new ArrayList<>();
            PciFace pci = new PciFace(w, new PrintStream(log, true), left::add);
            pci.resetNode = old -> w.reset(old.index);
            Transport t = new Transport(System.err);
            List<ByteBuffer> replies = new ArrayList<>();
            t.sent = (c, b) -> replies.add(b.duplicate());
            Connection c = t.replayed(1);
            Program[] p = new Program[1];
            pci.open(c, ViolationFloodTest.openRequest(pid), (id, name) -> p[0] = new Program(id, name), false);

            long va = firstReadable(pid); // the start of a mapping of sleep's: its ELF header
            pci.handle(c, Wire.Op.PCI_DMA_MAP, body(new Wire.Out(new WireLayout.DmaMapRequest(va, 4096, 0))));
            ByteBuffer reply = replies.get(replies.size() - 1).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(0, reply.getInt(4), "PCI_DMA_MAP answered");
            long iova = reply.getLong(8);
            assertArrayEquals(new byte[]{0x7f, 'E', 'L', 'F'}, read(w, iova), "the adapter reads the program's bytes");
            pci.answerWaits(false);
            assertEquals(1, pci.open(), "a live program keeps its function");

            child.destroyForcibly().waitFor();
            assertArrayEquals(new byte[4], read(w, iova), "its memory is released: zeros");
            pci.answerWaits(false);
            String text = log.toString(StandardCharsets.UTF_8);
            assertEquals(0, pci.open(), "let go at the look after:\n" + text);
            assertEquals(List.of(p[0]), left, "its program is told once that a function of it closed");
            assertTrue(text.contains("closed its PCI function as it exited (its memory is gone)"), text);
            assertTrue(text.contains("DMA to its memory refused 1 times"), text);

            // what it sent before it died, then its connection's end, reach serve after: dropped, and nothing more
            assertTrue(pci.owns(c));
            pci.handle(c, Wire.Op.PCI_DMA_MAP, body(new Wire.Out(new WireLayout.DmaMapRequest(va, 4096, 0))));
            pci.closed(c, "closed its PCI function");
            assertFalse(pci.owns(c));
            assertEquals(List.of(p[0]), left, "told once");
            String all = log.toString(StandardCharsets.UTF_8);
            assertEquals(1, all.lines().filter(l -> l.contains("closed its PCI function")).count(), all);
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void anAddressNotMappedInALiveProgramIsRefusedButItsMemoryIsNotGone() throws Exception {
        Process child = new ProcessBuilder("sleep", "60").start();
        try (ProcMemory m = new ProcMemory((int) child.pid())) {
            byte[] b = new byte[]{1, 2, 3, 4};
            m.at(0x1000).read(0, b, 0, 4); // nothing is mapped at 0x1000: EIO
            assertArrayEquals(new byte[4], b);
            assertEquals(1, m.failures());
            assertFalse(m.gone());
            child.destroyForcibly().waitFor();
            m.at(0x1000).read(0, b, 0, 4);
            assertTrue(m.gone(), m.firstFailure());
        } finally {
            child.destroyForcibly();
        }
    }

    /** The first readable mapping's start in process {@code pid}. */
    private static long firstReadable(int pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/maps"))) {
            String[] f = line.split(" ");
            if (f[1].startsWith("r")) return Long.parseUnsignedLong(f[0].substring(0, f[0].indexOf('-')), 16);
        }
        throw new AssertionError("nothing readable in process " + pid);
    }

    private static byte[] read(World w, long iova) {
        byte[] b = new byte[4];
        w.host(0).memory.read(iova, b, 0, 4);
        return b;
    }

    /** A request's body, as serve's inbox hands it to the face (after the length and op). */
    private static Wire.In body(Wire.Out out) {
        ByteBuffer b = out.finish(0);
        byte[] all = new byte[b.remaining()];
        b.get(all);
        return new Wire.In(Arrays.copyOfRange(all, 8, all.length));
    }
}
