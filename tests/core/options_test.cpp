// The option declarations (upres/options.hpp): every operation's table is well formed, every
// allowed value of every enum option is accepted and round-trips, a wrong one is refused with
// the whole list, numbers are range-checked, and the declared defaults are the options structs'
// defaults (the CLI takes its defaults from the declarations, the library from the structs).
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/io.hpp>
#include <upres/metrics.hpp>
#include <upres/options.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/stereo.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>
#include "core/format_number.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

TEST(Options, EveryOperationIsWellFormed) {
    std::set<std::string> ops;
    ASSERT_GE(operations().size(), 8u);
    for (const OperationDesc* op : operations()) {
        EXPECT_TRUE(ops.insert(op->name).second) << "operation declared twice: " << op->name;
        EXPECT_EQ(&operation(op->name), op);
        EXPECT_GT(std::string(op->doc).size(), 10u) << op->name;
        std::set<std::string> names;
        for (const OptionDesc& o : op->options) {
            SCOPED_TRACE(std::string(op->name) + " " + o.name);
            EXPECT_TRUE(names.insert(o.name).second) << "option declared twice";
            EXPECT_EQ(&op->option(o.name), &o);
            EXPECT_EQ(o.flag(), std::string("--") + o.name);
            EXPECT_GT(std::string(o.doc).size(), 3u);
            EXPECT_EQ(o.kind == OptionKind::Enum, o.values != nullptr);
            const std::string help = o.help();
            if (o.kind == OptionKind::Enum) {
                EXPECT_NE(help.find("(allowed: " + o.values().allowed() + ")"), std::string::npos)
                    << help;
                if (o.def[0] != '\0') {
                    EXPECT_NO_THROW(o.values().parse(o.def));
                }
            }
            if (o.kind == OptionKind::Int || o.kind == OptionKind::Real) {
                EXPECT_LE(o.min, o.max);
                ASSERT_NE(o.def[0], '\0') << "numbers declare a default";
                EXPECT_NO_THROW(o.check_range(op->name, std::stod(o.def)));
            }
            if (o.def[0] != '\0' && o.kind != OptionKind::Flag) {
                EXPECT_NE(help.find(std::string("[default: ") + o.def + "]"), std::string::npos)
                    << help;
            }
        }
    }
    test::expect_error(
        [] { operation("frobnicate"); }, ErrorCode::InvalidArgument,
        "allowed: context, convert, compare, prefilter, warp, seabi, srcnn, upscale");
    test::expect_error([] { operation("warp").option("nope"); }, ErrorCode::Internal, "nope");
}

TEST(Options, EveryAllowedValueIsAcceptedAndAWrongOneRefusedWithTheList) {
    int checked = 0;
    for (const OperationDesc* op : operations())
        for (const OptionDesc& o : op->options) {
            if (o.kind != OptionKind::Enum) continue;
            const EnumDesc& d = o.values();
            SCOPED_TRACE(std::string(op->name) + " " + o.name);
            ASSERT_FALSE(d.entries.empty());
            std::set<std::string> names;
            for (const EnumEntry& e : d.entries) {
                EXPECT_TRUE(names.insert(e.name).second) << "name listed twice: " << e.name;
                EXPECT_EQ(d.parse(e.name), e.value) << e.name;
                EXPECT_TRUE(d.contains(e.value));
                // The printed name of a value parses back to it (aliases print as the first).
                EXPECT_EQ(d.parse(d.name_of(e.value)), e.value);
                ++checked;
            }
            for (const char* wrong : {"", "bogus", "AUTO ", "mirror2"})
                test::expect_error([&] { d.parse(wrong); }, ErrorCode::InvalidArgument,
                                   std::string("unknown ") + d.what + " '" + wrong +
                                       "' (allowed: " + d.allowed() + ")");
            EXPECT_STREQ(d.name_of(-12345), "unknown");
        }
    EXPECT_GE(checked, 40);
}

TEST(Options, NumbersAreRangeChecked) {
    const OptionDesc& it = operation("upscale").option("iterations");
    EXPECT_NO_THROW(it.check_range("upscale", 1));
    EXPECT_NO_THROW(it.check_range("upscale", 1000));
    test::expect_error([&] { it.check_range("upscale", 0); }, ErrorCode::InvalidArgument,
                       "upscale: iterations 0 is outside [1, 1000]");
    test::expect_error([&] { it.check_range("upscale", std::nan("")); }, ErrorCode::InvalidArgument,
                       "outside");
    EXPECT_NE(it.help().find("(1..1000)"), std::string::npos) << it.help();
    // warp's fill takes any number, NaN included (float images: scipy's cval=np.nan).
    const OptionDesc& fill = operation("warp").option("fill");
    EXPECT_TRUE(fill.unbounded());
    EXPECT_NO_THROW(fill.check_range("warp", std::nan("")));
    EXPECT_NO_THROW(fill.check_range("warp", -std::numeric_limits<double>::infinity()));
}

template <class E>
E declared_default(const char* op, const char* option) {
    return parse_enum<E>(operation(op).option(option).def);
}
double declared_number(const char* op, const char* option) {
    return std::stod(operation(op).option(option).def);
}

TEST(Options, DeclaredDefaultsAreTheLibrarysDefaults) {
    const WarpOptions w;
    EXPECT_EQ(declared_default<Interp>("warp", "interp"), w.interp);
    EXPECT_EQ(declared_default<Border>("warp", "border"), w.border);
    EXPECT_EQ(parse_prefilter_name(operation("warp").option("prefilter").def), w.prefilter);
    EXPECT_EQ(declared_number("warp", "fill"), w.fill);
    const PrefilterOptions p;
    EXPECT_EQ(declared_default<Border>("prefilter", "border"), p.border);
    EXPECT_EQ(declared_number("prefilter", "fir-length"), p.fir_length);
    EXPECT_EQ(declared_default<PrefilterVariant>("prefilter", "variant"), p.variant);
    const SeabiOptions s;
    EXPECT_EQ(declared_default<SeabiMethod>("seabi", "method"), s.method);
    EXPECT_EQ(declared_number("seabi", "iterations"), s.max_iterations);
    EXPECT_EQ(declared_number("seabi", "max-error"), s.max_error);
    EXPECT_EQ(declared_number("seabi", "stripes"), s.stripes);
    const SrcnnOptions r;
    EXPECT_EQ(declared_default<SrcnnPrecision>("srcnn", "precision"), r.precision);
    EXPECT_EQ(declared_default<SrcnnVariant>("srcnn", "variant"), r.variant);
    const UpscaleOptions u;
    EXPECT_EQ(declared_default<UpscaleMethod>("upscale", "method"), u.method);
    EXPECT_EQ(declared_default<Lattice>("upscale", "lattice"), u.lattice);
    EXPECT_EQ(declared_number("upscale", "scale"), u.scale);
    EXPECT_EQ(declared_number("upscale", "iterations"), u.max_iterations);
    EXPECT_EQ(declared_number("upscale", "max-error"), u.max_error);
    EXPECT_EQ(declared_default<SrcnnPrecision>("upscale", "precision"), u.srcnn.precision);
    EXPECT_EQ(declared_default<SrcnnVariant>("upscale", "variant"), u.srcnn.variant);
    const MetricOptions m;
    EXPECT_EQ(declared_number("compare", "shave"), m.shave);
    EXPECT_EQ(declared_number("compare", "data-range"), m.data_range);
    const StereoOptions st;
    EXPECT_EQ(declared_number("stereo", "min-disparity"), st.min_disparity);
    EXPECT_EQ(declared_number("stereo", "disparities"), st.num_disparities);
    EXPECT_EQ(declared_default<StereoCost>("stereo", "cost"), st.cost);
    EXPECT_EQ(declared_default<StereoAggregation>("stereo", "aggregate"), st.aggregation);
    EXPECT_EQ(declared_number("stereo", "box-size"), st.box_size);
    EXPECT_EQ(declared_number("stereo", "max-cost"), st.max_cost);
    EXPECT_EQ(declared_number("stereo", "lr-check"), st.lr_check);
    EXPECT_EQ(declared_number("stereo", "uniqueness"), st.uniqueness);
    EXPECT_EQ(declared_default<StereoVariant>("stereo", "variant"), st.variant);
    EXPECT_EQ(declared_number("stereo", "p1"), st.p1);
    EXPECT_EQ(declared_number("stereo", "p2"), st.p2);
    EXPECT_EQ(declared_number("stereo", "sgm-window"), st.sgm_window);
    EXPECT_EQ(declared_number("stereo", "speckle-size"), st.speckle_size);
    EXPECT_EQ(declared_number("stereo", "speckle-range"), st.speckle_range);
    EXPECT_FALSE(st.median);  // the declared flag median, off by default
    EXPECT_TRUE(std::isnan(declared_number("stereo", "invalid")) && std::isnan(st.invalid));
    EXPECT_TRUE(st.subpixel);  // the declared flag is no-subpixel, off by default
    const Context c;
    EXPECT_EQ(declared_default<Backend>("context", "backend"), c.backend);
    EXPECT_EQ(declared_number("context", "threads"), c.threads);
}

// Every option stored in its options struct (OptionDesc::set / get through the field's offset)
// reads back what was set, and lands in the right member.
template <class S>
void check_fields(const char* op_name, std::initializer_list<const char*> not_fields) {
    const OperationDesc& op = operation(op_name);
    for (const OptionDesc& o : op.options) {
        SCOPED_TRACE(std::string(op_name) + " " + o.name);
        bool expected_field = true;
        for (const char* n : not_fields)
            if (std::string(n) == o.name) expected_field = false;
        EXPECT_EQ(o.field != FieldType::None, expected_field);
        if (o.field == FieldType::None) continue;
        S s{};
        const S defaults{};
        if (o.def[0] != '\0' && o.kind != OptionKind::Flag) {
            EXPECT_EQ(o.get(&defaults), o.kind == OptionKind::Enum
                                            ? std::string(o.def)
                                            : format_number(std::stod(o.def)));
        }
        switch (o.kind) {
            case OptionKind::Enum:
                for (const EnumEntry& e : o.values().entries) {
                    o.set(&s, op_name, e.name);
                    EXPECT_EQ(o.values().parse(o.get(&s)), e.value);
                }
                test::expect_error([&] { o.set(&s, op_name, "nope"); }, ErrorCode::InvalidArgument,
                                   "allowed:");
                break;
            case OptionKind::Int:
            case OptionKind::Real:
                o.set(&s, op_name, format_number(o.max));
                EXPECT_EQ(o.get(&s), format_number(o.max));
                o.set(&s, op_name, format_number(o.min));
                EXPECT_EQ(o.get(&s), format_number(o.min));
                test::expect_error([&] { o.set(&s, op_name, "12x"); }, ErrorCode::InvalidArgument,
                                   o.name);
                if (!o.unbounded()) {
                    test::expect_error([&] { o.set(&s, op_name, format_number(o.max * 2 + 1)); },
                                       ErrorCode::InvalidArgument, "outside");
                }
                break;
            case OptionKind::Flag:
                o.set(&s, op_name, "true");
                EXPECT_EQ(o.get(&s), "true");
                test::expect_error([&] { o.set(&s, op_name, "maybe"); }, ErrorCode::InvalidArgument,
                                   "true or false");
                break;
            case OptionKind::Text:
                o.set(&s, op_name, "a/b.srcnn");
                EXPECT_EQ(o.get(&s), "a/b.srcnn");
                break;
        }
    }
}

TEST(Options, FieldOptionsSetTheirStructMember) {
    check_fields<WarpOptions>("warp", {"prefilter"});
    check_fields<PrefilterOptions>("prefilter", {});
    check_fields<SeabiOptions>("seabi", {});
    check_fields<SrcnnOptions>("srcnn", {"model"});
    check_fields<UpscaleOptions>("upscale", {});
    check_fields<MetricOptions>("compare", {"no-y"});
    check_fields<StereoOptions>("stereo", {"no-subpixel"});
    check_fields<Context>("context", {});
    // The offsets land in the named members.
    WarpOptions w;
    operation("warp").option("interp").set(&w, "warp", "cubic");
    operation("warp").option("fill").set(&w, "warp", "0.5");
    operation("warp").option("fast").set(&w, "warp", "true");
    EXPECT_EQ(w.interp, Interp::Cubic);
    EXPECT_EQ(w.fill, 0.5f);
    EXPECT_TRUE(w.fast_texture);
    EXPECT_EQ(w.border, Border::Mirror);
    UpscaleOptions u;
    operation("upscale").option("precision").set(&u, "upscale", "fp16");
    operation("upscale").option("iterations").set(&u, "upscale", "7");
    operation("upscale").option("model").set(&u, "upscale", "m.srcnn");
    EXPECT_EQ(u.srcnn.precision, SrcnnPrecision::Fp16);
    EXPECT_EQ(u.max_iterations, 7);
    EXPECT_EQ(u.model, "m.srcnn");
    test::expect_error([&] { operation("warp").option("prefilter").set(&w, "warp", "fir"); },
                       ErrorCode::Internal, "not a field");
}

TEST(Options, PublicNamesComeFromTheTables) {
    EXPECT_STREQ(to_string(Interp::Cubic), "cubic");
    EXPECT_EQ(parse_interp("nearest"), Interp::Nearest);
    EXPECT_STREQ(to_string(Border::Wrap), "wrap");
    EXPECT_EQ(parse_border("reflect"), Border::Reflect);
    EXPECT_STREQ(to_string(Backend::Cuda), "cuda");
    EXPECT_STREQ(to_string(PixelType::U16), "u16");
    EXPECT_EQ(parse_enum<PixelType>("f32"), PixelType::F32);
    EXPECT_STREQ(to_string(SrcnnVariant::SharedKernelPatch), "shared-kernel-patch");
    EXPECT_STREQ(to_string(PrefilterVariant::IirFused), "iir-fused");
    EXPECT_STREQ(to_string(UpscaleMethod::SilSeabi), "silseabi");
    EXPECT_STREQ(to_string(Lattice::CoSited), "cosited");
    EXPECT_STREQ(to_string(FileFormat::Jpeg), "jpeg");
    EXPECT_EQ(parse_file_format("JPG"), FileFormat::Jpeg);
    EXPECT_EQ(parse_file_format("pgm"), FileFormat::Pnm);
    test::expect_error([] { parse_file_format("gif"); }, ErrorCode::UnsupportedFormat,
                       "allowed: auto, png, jpeg, jpg, tiff, tif, pfm, pnm, pgm, ppm, npy");
    test::expect_error(
        [] { parse_border("clamp"); }, ErrorCode::InvalidArgument,
        "unknown border 'clamp' (allowed: mirror, reflect, nearest, wrap, constant)");
    EXPECT_EQ(parse_prefilter_name("iir"), 0);
    EXPECT_EQ(parse_prefilter_name("fir"), kDefaultFirLength);
    EXPECT_EQ(parse_prefilter_name("fir3"), 3);
    EXPECT_EQ(parse_prefilter_name("fir31"), 31);
    for (const char* bad : {"fir2", "fir33", "fir1", "firx", "fir015", "iir3", ""})
        test::expect_error([&] { parse_prefilter_name(bad); }, ErrorCode::InvalidArgument,
                           "allowed: iir, fir");
}

}  // namespace
}  // namespace upres
