package nicsim.sim;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The bit layout of a payload record: named fields with widths, in order. It is the one
 * definition both twins use: the Java model traces and compares payloads field by field through
 * it, and the SpinalHDL side builds its bundle from the same names and widths, so a port's
 * signals are called the same in both traces ({@code io_<port>_payload_<field>}).
 *
 * <p>Fields are at most 64 bits; wider data is split into several fields.
 */
public final class Layout<T> {
    /** One field: name, width in bits, bit offset from the least significant end, and its getter. */
    public record Field<T>(String name, int width, int offset, ToLongFunction<T> getter) {
        public long mask() { return width == 64 ? -1L : (1L << width) - 1; }
    }

    private final String name;
    private final List<Field<T>> fields;
    private final Function<long[], T> maker;
    private final int width;

    private Layout(String name, List<Field<T>> fields, Function<long[], T> maker) {
        this.name = name;
        this.fields = List.copyOf(fields);
        this.maker = maker;
        Field<T> top = fields.isEmpty() ? null : fields.get(fields.size() - 1);
        this.width = top == null ? 0 : top.offset() + top.width();
    }

    public static <T> Builder<T> builder(String name) { return new Builder<>(name); }

    public String name() { return name; }
    public List<Field<T>> fields() { return fields; }
    public int width() { return width; }

    public Field<T> field(String fieldName) {
        for (Field<T> f : fields) if (f.name().equals(fieldName)) return f;
        throw new IllegalArgumentException("layout " + name + " has no field '" + fieldName + "'");
    }

    /** Field values of a payload, in field order, each checked against its width. */
    public long[] values(T payload) {
        long[] v = new long[fields.size()];
        for (int i = 0; i < v.length; i++) {
            Field<T> f = fields.get(i);
            long x = f.getter().applyAsLong(payload);
            if ((x & ~f.mask()) != 0)
                throw new IllegalArgumentException(name + "." + f.name() + " = 0x" + Long.toHexString(x)
                        + " does not fit in " + f.width() + " bits");
            v[i] = x;
        }
        return v;
    }

    /** Builds a payload from field values (as read from an RTL port). */
    public T make(long[] values) {
        if (values.length != fields.size())
            throw new IllegalArgumentException(name + ": " + values.length + " values for " + fields.size()
                    + " fields");
        return maker.apply(values);
    }

    /** The whole payload packed into one number, first field in the least significant bits. */
    public BigInteger pack(T payload) {
        long[] v = values(payload);
        BigInteger r = BigInteger.ZERO;
        for (int i = fields.size() - 1; i >= 0; i--)
            r = r.shiftLeft(fields.get(i).width()).or(new BigInteger(Long.toUnsignedString(v[i])));
        return r;
    }

    public T unpack(BigInteger packed) {
        long[] v = new long[fields.size()];
        for (int i = 0; i < v.length; i++) {
            Field<T> f = fields.get(i);
            v[i] = packed.shiftRight(f.offset()).longValue() & f.mask();
        }
        return make(v);
    }

    public static final class Builder<T> {
        private final String name;
        private final List<Field<T>> fields = new ArrayList<>();
        private int offset;

        private Builder(String name) { this.name = name; }

        public Builder<T> field(String fieldName, int width, ToLongFunction<T> getter) {
            if (width < 1 || width > 64)
                throw new IllegalArgumentException(name + "." + fieldName + ": width " + width + " must be 1..64");
            for (Field<T> f : fields)
                if (f.name().equals(fieldName))
                    throw new IllegalArgumentException(name + ": field '" + fieldName + "' defined twice");
            fields.add(new Field<>(fieldName, width, offset, getter));
            offset += width;
            return this;
        }

        /** Fields {@code <prefix>_0 .. <prefix>_<count-1>} of {@code width} bits: the words of a data array. */
        public Builder<T> words(String prefix, int count, int width, Function<T, long[]> data) {
            for (int i = 0; i < count; i++) {
                int k = i;
                field(prefix + "_" + i, width, t -> data.apply(t)[k]);
            }
            return this;
        }

        public Layout<T> build(Function<long[], T> maker) { return new Layout<>(name, fields, maker); }
    }
}
