// Images: non-owning ImageView<T> and owning Image<T>, in host or CUDA device memory.
//
// Pixel types: std::uint8_t, std::uint16_t and float. 1 to 4 interleaved channels. The row
// stride is counted in elements (not bytes) and may exceed width * channels, so a view can
// address a sub-image of a larger buffer (ImageView::sub) or a NumPy/CuPy array with padding.
// Pixel (x, y), channel c lives at data()[y * stride() + x * channels() + c].
//
// Limits (checked before any allocation): width and height in [0, kMaxDimension], at most
// kMaxPixels pixels. A view of size 0 x 0 is "empty"; operations reject empty inputs.
#pragma once

#include <upres/error.hpp>
#include <upres/options.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace upres {

inline constexpr int kMaxDimension = 1 << 16;                      // 65536
inline constexpr std::int64_t kMaxPixels = std::int64_t{1} << 30;  // 1 Gpixel
inline constexpr int kMaxChannels = 4;

enum class PixelType { U8, U16, F32 };
enum class Location { Host, Device };

const char* to_string(PixelType t) noexcept;
const char* to_string(Location l) noexcept;
// Names "u8", "u16", "f32" (parse_enum<PixelType>).
template <>
const EnumDesc& enum_desc<PixelType>() noexcept;
std::size_t pixel_size(PixelType t) noexcept;

template <class T>
struct PixelTraits;
template <>
struct PixelTraits<std::uint8_t> {
    static constexpr PixelType type = PixelType::U8;
    static constexpr double max_value = 255.0;
};
template <>
struct PixelTraits<std::uint16_t> {
    static constexpr PixelType type = PixelType::U16;
    static constexpr double max_value = 65535.0;
};
template <>
struct PixelTraits<float> {
    static constexpr PixelType type = PixelType::F32;
    static constexpr double max_value = 1.0;  // nominal range of normalized float images
};
template <class T>
concept Pixel = requires {
    PixelTraits<std::remove_const_t<T>>::type;
};

namespace detail {
// Throws Error(InvalidArgument) naming the problem if the geometry is not allowed.
void check_geometry(int width, int height, int channels, std::ptrdiff_t stride, const void* data,
                    const char* what);
void* allocate(std::size_t bytes, Location loc);  // throws Error(OutOfMemory / Backend...)
void deallocate(void* p, Location loc) noexcept;

// Type-erased view used to implement copy/convert once for every pixel type.
struct RawView {
    void* data = nullptr;
    PixelType type = PixelType::U8;
    int width = 0, height = 0, channels = 0;
    std::ptrdiff_t stride = 0;  // elements
    Location location = Location::Host;
};
}  // namespace detail

template <Pixel T>
class ImageView {
  public:
    using value_type = std::remove_const_t<T>;

    ImageView() = default;
    // stride in elements; 0 means tightly packed (width * channels).
    ImageView(T* data, int width, int height, int channels, std::ptrdiff_t stride = 0,
              Location location = Location::Host)
        : data_(data),
          width_(width),
          height_(height),
          channels_(channels),
          stride_(stride == 0 ? std::ptrdiff_t{width} * channels : stride),
          location_(location) {
        detail::check_geometry(width_, height_, channels_, stride_, data_, "ImageView");
    }

    // A mutable view converts to a read-only one.
    template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
        ImageView(const ImageView<U>& other)  // NOLINT(google-explicit-constructor)
        : data_(other.data()),
          width_(other.width()),
          height_(other.height()),
          channels_(other.channels()),
          stride_(other.stride()),
          location_(other.location()) {}

    T* data() const noexcept { return data_; }
    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int channels() const noexcept { return channels_; }
    std::ptrdiff_t stride() const noexcept { return stride_; }
    Location location() const noexcept { return location_; }
    PixelType pixel_type() const noexcept { return PixelTraits<value_type>::type; }
    bool empty() const noexcept { return width_ == 0 || height_ == 0; }
    bool on_device() const noexcept { return location_ == Location::Device; }
    bool is_contiguous() const noexcept { return stride_ == std::ptrdiff_t{width_} * channels_; }
    std::int64_t pixel_count() const noexcept { return std::int64_t{width_} * height_; }

    // Row y (host or device pointer; dereference only where the memory lives).
    T* row(int y) const noexcept { return data_ + std::ptrdiff_t{y} * stride_; }
    // Element access for host views. Not bounds-checked in release builds.
    T& operator()(int x, int y, int c = 0) const noexcept {
        return data_[std::ptrdiff_t{y} * stride_ + std::ptrdiff_t{x} * channels_ + c];
    }

    // Sub-image [x, x + w) x [y, y + h); throws Error(InvalidArgument) if it leaves the view.
    ImageView sub(int x, int y, int w, int h) const {
        if (x < 0 || y < 0 || w < 0 || h < 0 || x > width_ - w || y > height_ - h) {
            throw Error(ErrorCode::InvalidArgument,
                        "ImageView::sub: rectangle (" + std::to_string(x) + ", " +
                            std::to_string(y) + ", " + std::to_string(w) + " x " +
                            std::to_string(h) + ") is outside the " + std::to_string(width_) +
                            " x " + std::to_string(height_) + " image");
        }
        ImageView v;
        v.data_ = data_ + std::ptrdiff_t{y} * stride_ + std::ptrdiff_t{x} * channels_;
        v.width_ = w;
        v.height_ = h;
        v.channels_ = channels_;
        v.stride_ = stride_;
        v.location_ = location_;
        return v;
    }

    detail::RawView raw() const noexcept {
        return {const_cast<value_type*>(data_),
                PixelTraits<value_type>::type,
                width_,
                height_,
                channels_,
                stride_,
                location_};
    }

  private:
    T* data_ = nullptr;
    int width_ = 0, height_ = 0, channels_ = 1;
    std::ptrdiff_t stride_ = 0;
    Location location_ = Location::Host;
};

// Owning image with a tight stride, in host or device memory. Move-only; clone() copies.
template <Pixel T>
class Image {
    static_assert(!std::is_const_v<T>, "Image<T> owns mutable pixels");

  public:
    Image() = default;
    Image(int width, int height, int channels, Location location = Location::Host) {
        detail::check_geometry(width, height, channels, 0, nullptr, "Image");
        std::size_t bytes = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                            static_cast<std::size_t>(channels) * sizeof(T);
        T* p = bytes ? static_cast<T*>(detail::allocate(bytes, location)) : nullptr;
        data_ = p;
        width_ = width;
        height_ = height;
        channels_ = channels;
        location_ = location;
    }
    Image(Image&& o) noexcept { swap(o); }
    Image& operator=(Image&& o) noexcept {
        Image tmp(std::move(o));
        swap(tmp);
        return *this;
    }
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
    ~Image() {
        if (data_) detail::deallocate(data_, location_);
    }

    ImageView<T> view() noexcept { return make_view<T>(); }
    ImageView<const T> view() const noexcept { return make_view<const T>(); }
    operator ImageView<T>() noexcept { return view(); }  // NOLINT(google-explicit-constructor)
    operator ImageView<const T>() const noexcept {       // NOLINT(google-explicit-constructor)
        return view();
    }

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int channels() const noexcept { return channels_; }
    std::ptrdiff_t stride() const noexcept { return std::ptrdiff_t{width_} * channels_; }
    Location location() const noexcept { return location_; }
    PixelType pixel_type() const noexcept { return PixelTraits<T>::type; }
    bool empty() const noexcept { return width_ == 0 || height_ == 0; }
    bool on_device() const noexcept { return location_ == Location::Device; }
    std::int64_t pixel_count() const noexcept { return std::int64_t{width_} * height_; }
    T& operator()(int x, int y, int c = 0) noexcept { return data_[index(x, y, c)]; }
    const T& operator()(int x, int y, int c = 0) const noexcept { return data_[index(x, y, c)]; }
    ImageView<T> sub(int x, int y, int w, int h) { return view().sub(x, y, w, h); }
    ImageView<const T> sub(int x, int y, int w, int h) const { return view().sub(x, y, w, h); }

    void swap(Image& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(width_, o.width_);
        std::swap(height_, o.height_);
        std::swap(channels_, o.channels_);
        std::swap(location_, o.location_);
    }

  private:
    std::ptrdiff_t index(int x, int y, int c) const noexcept {
        return (std::ptrdiff_t{y} * width_ + x) * channels_ + c;
    }
    template <class U>
    ImageView<U> make_view() const noexcept {
        if (!data_) return ImageView<U>();
        return ImageView<U>(data_, width_, height_, channels_, 0, location_);
    }
    T* data_ = nullptr;
    int width_ = 0, height_ = 0, channels_ = 1;
    Location location_ = Location::Host;
};

namespace detail {
void copy_raw(const RawView& src, const RawView& dst, void* cuda_stream);
void convert_raw(const RawView& src, const RawView& dst, bool normalize, void* cuda_stream,
                 int threads);
}  // namespace detail

// Copies pixels between views of the same type, size and channel count, in any combination of
// host and device memory (cudaMemcpy2D where a device is involved, on ctx.cuda_stream; the call
// returns when the copy is complete). Overlapping views are not allowed.
template <class S, class D>
void copy(const ImageView<S>& src, const ImageView<D>& dst, void* cuda_stream = nullptr) {
    static_assert(std::is_same_v<std::remove_const_t<S>, D>, "copy: pixel types must match");
    detail::copy_raw(src.raw(), dst.raw(), cuda_stream);
}

// A new image holding a copy of src in `location`.
template <class S>
Image<std::remove_const_t<S>> clone(const ImageView<S>& src, Location location = Location::Host) {
    Image<std::remove_const_t<S>> out(src.width(), src.height(), src.channels(), location);
    if (!src.empty()) copy(src, out.view());
    return out;
}
template <class T>
Image<T> clone(const Image<T>& src, Location location = Location::Host) {
    return clone(src.view(), location);
}

// Converts pixel types, channel counts equal. With normalize (the default) the nominal ranges
// map onto each other: u8 [0,255] <-> u16 [0,65535] (x257) <-> f32 [0,1]. Without it values
// are kept as numbers. Conversions to integers round to nearest and clamp; NaN becomes 0.
// Runs on the host for host views and on the device for device views (both must live in the
// same place).
template <class S, class D>
void convert(const ImageView<S>& src, const ImageView<D>& dst, bool normalize = true,
             void* cuda_stream = nullptr, int threads = 0) {
    static_assert(!std::is_const_v<D>, "convert: destination must be writable");
    detail::convert_raw(src.raw(), dst.raw(), normalize, cuda_stream, threads);
}

// An image of any supported pixel type (what image readers return).
class AnyImage {
  public:
    using Variant = std::variant<Image<std::uint8_t>, Image<std::uint16_t>, Image<float>>;
    AnyImage() = default;
    template <Pixel T>
    AnyImage(Image<T>&& img) : v_(std::move(img)) {}  // NOLINT(google-explicit-constructor)

    PixelType pixel_type() const noexcept {
        return std::visit([](const auto& im) { return im.pixel_type(); }, v_);
    }
    int width() const noexcept {
        return std::visit([](const auto& im) { return im.width(); }, v_);
    }
    int height() const noexcept {
        return std::visit([](const auto& im) { return im.height(); }, v_);
    }
    int channels() const noexcept {
        return std::visit([](const auto& im) { return im.channels(); }, v_);
    }
    bool empty() const noexcept {
        return std::visit([](const auto& im) { return im.empty(); }, v_);
    }
    template <Pixel T>
    bool holds() const noexcept {
        return std::holds_alternative<Image<T>>(v_);
    }
    // Throws Error(InvalidArgument) if the image holds another pixel type.
    template <Pixel T>
    Image<T>& as() {
        if (auto* p = std::get_if<Image<T>>(&v_)) return *p;
        throw Error(ErrorCode::InvalidArgument, std::string("AnyImage: holds ") +
                                                    to_string(pixel_type()) + ", not " +
                                                    to_string(PixelTraits<T>::type));
    }
    template <Pixel T>
    const Image<T>& as() const {
        return const_cast<AnyImage*>(this)->as<T>();
    }
    // A copy converted to T (normalized ranges, see convert()).
    template <Pixel T>
    Image<T> to() const {
        return std::visit(
            [](const auto& im) {
                Image<T> out(im.width(), im.height(), im.channels(), im.location());
                if (!im.empty()) convert(im.view(), out.view());
                return out;
            },
            v_);
    }
    Variant& variant() noexcept { return v_; }
    const Variant& variant() const noexcept { return v_; }

  private:
    Variant v_;
};

}  // namespace upres
