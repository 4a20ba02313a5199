package nicsim.hw.rtl;

import java.nio.file.Path;

/**
 * One instance of a Verilated block behind nicsim's own JNI binding ({@link NativeBuild} makes the
 * library). Unlike SpinalSim's binding, which crosses into C++ once per signal and runs each
 * simulation on its own thread, this one crosses once per batch of cycles on the caller's thread:
 * {@link #run} takes a whole batch of input records and returns every cycle's outputs.
 *
 * <p>A record is {@code [edges, in_0 .. in_{n-1}]}: take {@code edges} rising clock edges, then
 * drive the inputs (in the order the library was built with) and let the logic settle; the
 * outputs written for that record are the values the next edge will sample. An instance starts
 * just after reset: every input 0, reset held for 5 edges, then released.
 */
public final class NativeRtl implements AutoCloseable {
    private static native long open0(String library);

    private static native void run0(long handle, long[] records, int count, long[] outputs);

    private static native void close0(long handle);

    private static native void coverage0(long handle, String file);

    private final String name;
    private final int inputs, outputs;
    private final boolean coverage;
    private long handle;

    NativeRtl(String name, Path library, int inputs, int outputs, boolean coverage) {
        this.name = name;
        this.coverage = coverage;
        this.inputs = inputs;
        this.outputs = outputs;
        NativeBuild.loadBinding();
        this.handle = open0(library.toAbsolutePath().toString());
    }

    public String name() { return name; }

    /** Inputs per record, not counting the leading edge count. */
    public int inputs() { return inputs; }

    public int outputs() { return outputs; }

    /** Runs {@code count} records from {@code records}; writes {@code count * outputs()} values into {@code out}. */
    public void run(long[] records, int count, long[] out) {
        if (handle == 0) throw new IllegalStateException("RTL " + name + " is closed");
        if (count < 0 || (long) count * (inputs + 1) > records.length)
            throw new IllegalArgumentException("records: " + count + " records of " + (inputs + 1)
                    + " longs do not fit in " + records.length);
        if ((long) count * outputs > out.length)
            throw new IllegalArgumentException("out: " + count + " x " + outputs + " outputs do not fit in "
                    + out.length);
        for (int i = 0; i < count; i++) {
            long edges = records[i * (inputs + 1)];
            if (edges < 0) throw new IllegalArgumentException("record " + i + ": edges " + edges + " < 0");
        }
        run0(handle, records, count, out);
    }

    /**
     * Writes the line and toggle coverage this instance has gathered since it was made to {@code file}
     * (Verilator's coverage data, for {@code verilator_coverage}); only for a library built with coverage.
     */
    public void writeCoverage(Path file) {
        if (!coverage) throw new IllegalStateException("RTL " + name + " was not built with coverage");
        if (handle == 0) throw new IllegalStateException("RTL " + name + " is closed");
        coverage0(handle, file.toAbsolutePath().toString());
    }

    @Override public void close() {
        if (handle != 0) close0(handle);
        handle = 0;
    }
}
