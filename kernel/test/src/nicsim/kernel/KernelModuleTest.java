package nicsim.kernel;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The kernel driver as Mill built it (kernel.module): what the kernel's module loader and udev read
 * from it, so the guest's kernel binds it to the adapter's PCI function and loads ib_core and
 * ib_uverbs first.
 */
class KernelModuleTest {
    private static Path module() {
        String ko = System.getProperty("nicsim.kernel.module");
        assertNotNull(ko, "nicsim.kernel.module: where Mill built nicsim_ib.ko (build.sc passes it)");
        return Path.of(ko);
    }

    private static String modinfo(String field) throws Exception {
        Process p = new ProcessBuilder("modinfo", "-F", field, module().toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "modinfo did not finish");
        assertEquals(0, p.exitValue(), "modinfo -F " + field + ": " + out);
        return out;
    }

    private static String release() throws Exception {
        return Files.readString(Path.of(System.getProperty("nicsim.root"), "kernel", "RELEASE")).trim();
    }

    @Test
    void modinfoNamesTheModuleItsLicenseAndItsDependencies() throws Exception {
        assertTrue(Files.size(module()) > 10_000, "a module with code in it: " + module());
        assertEquals("nicsim_ib", modinfo("name"));
        assertEquals("Dual BSD/GPL", modinfo("license"), "GPL-compatible, or ib_core's GPL-only symbols refuse it");
        Set<String> depends = new TreeSet<>(Arrays.asList(modinfo("depends").split(",")));
        assertEquals(new TreeSet<>(List.of("ib_core", "ib_uverbs")), depends);
    }

    @Test
    void theAliasMatchesTheAdaptersPciIdsSoUdevLoadsIt() throws Exception {
        List<String> aliases = modinfo("alias").lines().toList();
        assertEquals(List.of("pci:v00001DE5d00000010sv*sd*bc*sc*i*"), aliases,
                "vendor 0x1de5, device 0x10, as docs/device.md's config table says");
    }

    @Test
    void itIsBuiltForTheGuestsKernel() throws Exception {
        String vermagic = modinfo("vermagic");
        assertTrue(vermagic.startsWith(release() + " "),
                "vermagic '" + vermagic + "' is for kernel/RELEASE " + release());
    }
}
