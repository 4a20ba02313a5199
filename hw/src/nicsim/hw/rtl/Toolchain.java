package nicsim.hw.rtl;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The programs RTL needs on the PATH: Verilator turns a block's Verilog into C++, g++ and make
 * build it (SpinalSim runs make; nicsim's binding runs g++ directly). Checked before any RTL is
 * built, so a missing tool is one clear line naming it and how to install it, not a failed
 * process deep in a build.
 */
public final class Toolchain {
    private Toolchain() {}

    /** What running a block as RTL needs, by command name (each is also its Debian package's name). */
    public static final List<String> RTL = List.of("verilator", "g++", "make");

    /** A program nicsim needs is not installed; the message says which and how to install it. */
    public static final class MissingTool extends RuntimeException {
        private final List<String> tools;

        MissingTool(List<String> tools) {
            super(String.join(", ", tools) + (tools.size() == 1 ? " is" : " are") + " not installed, and RTL needs "
                    + String.join(", ", RTL) + ": run scripts/ensure-tools.sh --rtl "
                    + "(as root it installs them with apt-get) or: sudo apt-get install -y " + String.join(" ", tools));
            this.tools = List.copyOf(tools);
        }

        /** The missing programs. */
        public List<String> tools() { return tools; }
    }

    /** Throws {@link MissingTool} naming every RTL tool not on the PATH. */
    public static void requireRtl() {
        List<String> missing = new ArrayList<>();
        for (String t : RTL) if (!onPath(t)) missing.add(t);
        if (!missing.isEmpty()) throw new MissingTool(missing);
    }

    /**
     * Whether {@code tool} is an executable in a folder of the PATH. The property
     * {@code nicsim.tools.path} stands in for the PATH (tests use it to play a machine without them).
     */
    public static boolean onPath(String tool) {
        String path = System.getProperty("nicsim.tools.path", System.getenv().getOrDefault("PATH", ""));
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path p = Path.of(dir, tool);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) return true;
        }
        return false;
    }
}
