package nicsim.serve;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How a message's fixed part, declared once as a record in {@link WireLayout}, is read, written and
 * given to C. A record's components are its fields in wire order: {@code int} and {@code boolean}
 * (0 or 1) are u32, {@code long} u64, {@code String} a NUL-padded text of {@link #TEXT_BYTES}, and a
 * record component is that record's fields in place (a struct within the struct in C). The C names
 * are the Java ones in snake case: record QpAttr's component maxRdAtomic is struct
 * nicsim_wire_qp_attr's max_rd_atomic. Little-endian and packed, as the rest of the protocol.
 */
final class WireCodec {
    private WireCodec() {}

    /** The bytes of a text field: a NUL-padded string, as struct ibv_device_attr's fw_ver. */
    static final int TEXT_BYTES = 64;

    /**
     * A u32 count or limit (max_send_wr, cqe...) that the verbs take as a Java int: a value past
     * 2^31 - 1 is EINVAL naming the field, as no device offers that many.
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.RECORD_COMPONENT)
    @interface Count {}

    /** A field's width on the wire. */
    enum Kind {
        U32(4), U64(8), TEXT(TEXT_BYTES), STRUCT(0);

        final int bytes;

        Kind(int bytes) { this.bytes = bytes; }
    }

    /** One field: its C name, kind, the record it holds (STRUCT), whether it is a count, and its accessor. */
    record Field(String name, Kind kind, Class<?> type, boolean count, Method accessor) {
        int bytes() { return kind == Kind.STRUCT ? shape(type).bytes : kind.bytes; }
    }

    /** A record's fields, constructor and size. */
    static final class Shape {
        final Class<?> type;
        final List<Field> fields = new ArrayList<>();
        final Constructor<?> constructor;
        final int bytes;

        private Shape(Class<?> type) {
            if (!type.isRecord()) throw new IllegalArgumentException(type + " is not a record");
            this.type = type;
            RecordComponent[] cs = type.getRecordComponents();
            Class<?>[] types = new Class<?>[cs.length];
            int n = 0;
            for (int i = 0; i < cs.length; i++) {
                RecordComponent c = cs[i];
                types[i] = c.getType();
                Field f = new Field(snake(c.getName()), kind(type, c), c.getType(), c.isAnnotationPresent(Count.class),
                        c.getAccessor());
                f.accessor().setAccessible(true);
                fields.add(f);
                n += f.bytes();
            }
            bytes = n;
            try {
                constructor = type.getDeclaredConstructor(types);
                constructor.setAccessible(true);
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException(type + " has no canonical constructor", e);
            }
        }

        /** The C struct's name: struct nicsim_wire_create_qp_request for record CreateQpRequest. */
        String cName() { return "nicsim_wire_" + snake(type.getSimpleName()); }
    }

    private static final ClassValue<Shape> SHAPES = new ClassValue<>() {
        @Override protected Shape computeValue(Class<?> type) { return new Shape(type); }
    };

    static Shape shape(Class<?> type) { return SHAPES.get(type); }

    /** The size on the wire of record type {@code type}. */
    static int bytes(Class<?> type) { return shape(type).bytes; }

    private static Kind kind(Class<?> owner, RecordComponent c) {
        Class<?> t = c.getType();
        if (t == int.class || t == boolean.class) return Kind.U32;
        if (t == long.class) return Kind.U64;
        if (t == String.class) return Kind.TEXT;
        if (t.isRecord()) return Kind.STRUCT;
        throw new IllegalArgumentException(owner.getSimpleName() + "." + c.getName() + ": a " + t.getSimpleName()
                + " has no wire form (int, long, boolean, String or a record)");
    }

    /** maxRdAtomic to max_rd_atomic, CreateQpRequest to create_qp_request. */
    static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }

    /** A {@code type} read from {@code in}; a field past the message's end is {@link Wire.Malformed}. */
    static <R> R read(Wire.In in, Class<R> type) {
        Shape s = shape(type);
        Object[] values = new Object[s.fields.size()];
        for (int i = 0; i < values.length; i++) {
            Field f = s.fields.get(i);
            values[i] = switch (f.kind()) {
                case U32 -> {
                    int v = f.count() ? in.count32(f.name()) : in.u32(f.name());
                    yield f.type() == boolean.class ? (Object) (v != 0) : (Object) v;
                }
                case U64 -> in.u64(f.name());
                case TEXT -> {
                    byte[] t = in.bytes(TEXT_BYTES, f.name());
                    int end = 0;
                    while (end < t.length && t[end] != 0) end++;
                    yield new String(t, 0, end, StandardCharsets.UTF_8);
                }
                case STRUCT -> read(in, f.type());
            };
        }
        try {
            return type.cast(s.constructor.newInstance(values));
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) throw r; // a record's own check of its fields
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(type + " cannot be made from its fields", e);
        }
    }

    /** {@code r}'s fields, in order, onto {@code out}. */
    static void write(Wire.Out out, Record r) {
        for (Field f : shape(r.getClass()).fields) {
            Object v;
            try {
                v = f.accessor().invoke(r);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(r.getClass() + "." + f.name() + " cannot be read", e);
            }
            switch (f.kind()) {
                case U32 -> out.u32(v instanceof Boolean b ? (b ? 1 : 0) : (Integer) v);
                case U64 -> out.u64((Long) v);
                case TEXT -> {
                    byte[] t = Arrays.copyOf(((String) v).getBytes(StandardCharsets.UTF_8), TEXT_BYTES);
                    t[t.length - 1] = 0;
                    out.bytes(t);
                }
                case STRUCT -> write(out, (Record) v);
            }
        }
    }

    /**
     * Each of {@code types} as a packed C struct, with its size and each field's offset asserted, so
     * that every C build checks the layout it was given (a record within another must come first).
     * The assertions are {@link #C_CHECKS}' macros, defined before the first struct.
     */
    static final String C_CHECKS = """
            #define NICSIM_WIRE_SIZE(s, n) _Static_assert(sizeof(struct s) == (n), #s)
            #define NICSIM_WIRE_AT(s, f, at) _Static_assert(offsetof(struct s, f) == (at), #s "." #f)
            """;

    static String cStructs(List<Class<? extends Record>> types) {
        StringBuilder b = new StringBuilder(C_CHECKS);
        List<Class<?>> done = new ArrayList<>();
        for (Class<?> t : types) {
            Shape s = shape(t);
            b.append("struct ").append(s.cName()).append(" {\n");
            for (Field f : s.fields) {
                b.append('\t').append(switch (f.kind()) {
                    case U32 -> "uint32_t " + f.name();
                    case U64 -> "uint64_t " + f.name();
                    case TEXT -> "char " + f.name() + "[" + TEXT_BYTES + "]";
                    case STRUCT -> {
                        if (!done.contains(f.type()))
                            throw new IllegalStateException(t.getSimpleName() + "." + f.name() + ": "
                                    + f.type().getSimpleName() + " must be declared before it");
                        yield "struct " + shape(f.type()).cName() + " " + f.name();
                    }
                }).append(";\n");
            }
            b.append("} __attribute__((packed));\nNICSIM_WIRE_SIZE(").append(s.cName()).append(", ")
                    .append(s.bytes).append(");\n");
            int at = 0;
            for (Field f : s.fields) {
                b.append("NICSIM_WIRE_AT(").append(s.cName()).append(", ").append(f.name()).append(", ").append(at)
                        .append(");\n");
                at += f.bytes();
            }
            done.add(t);
        }
        return b.toString();
    }
}
