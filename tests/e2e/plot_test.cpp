// End-to-end tests of `dpbudget plot`: the SVG is well-formed XML, has the
// parts a reader needs, and renders (rsvg-convert) to a picture with curves
// in it, checked by decoding the PNG (zlib) and counting coloured pixels.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::run_dpbudget;
using dpb::test::run_shell;
using dpb::test::slurp;

namespace {

struct Image {
  std::uint32_t width = 0, height = 0;
  std::size_t channels = 4;        ///< 3 (RGB) or 4 (RGBA)
  std::vector<std::uint8_t> rgba;  ///< 8-bit samples, row by row
};

std::uint32_t be32(const std::string& s, std::size_t at) {
  auto b = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i]));
  };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

/// Decodes the 8-bit RGB or RGBA, non-interlaced PNGs rsvg-convert writes.
Image decode_png(const std::string& png) {
  Image img;
  REQUIRE(png.size() > 33);
  REQUIRE(png.compare(1, 3, "PNG") == 0);
  std::string idat;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    const std::uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(png, at + 8);
      img.height = be32(png, at + 12);
      REQUIRE(png[at + 16] == 8);                         // bit depth
      REQUIRE((png[at + 17] == 2 || png[at + 17] == 6));  // RGB or RGBA
      img.channels = png[at + 17] == 6 ? 4 : 3;
      REQUIRE(png[at + 20] == 0);  // not interlaced
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  const std::size_t bpp = img.channels;
  const std::size_t stride = bpp * static_cast<std::size_t>(img.width);
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  REQUIRE(uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                     idat.size()) == Z_OK);
  img.rgba.resize(stride * img.height);
  for (std::size_t y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* in = &raw[y * (stride + 1) + 1];
    std::uint8_t* row = &img.rgba[y * stride];
    const std::uint8_t* up = y ? &img.rgba[(y - 1) * stride] : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? row[i - bpp] : 0, b = up ? up[i] : 0;
      const int c = up && i >= bpp ? up[i - bpp] : 0;
      int p = 0;
      switch (filter) {
        case 1:
          p = a;
          break;
        case 2:
          p = b;
          break;
        case 3:
          p = (a + b) / 2;
          break;
        case 4: {
          const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
          p = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          p = 0;
      }
      row[i] = static_cast<std::uint8_t>(in[i] + p);
    }
  }
  return img;
}

}  // namespace

TEST_CASE("plot writes a well-formed SVG with axes, legend and caption that renders") {
  const std::string svg_path = "/tmp/dpbudget_plot_test_" + std::to_string(::getpid()) + ".svg";
  const std::string png_path = svg_path + ".png";
  const auto r =
      run_dpbudget({"plot", "-q", "0.01", "--sigma", "1", "--steps", "1:2000", "--points", "40",
                    "--delta", "1e-5", "--accountant", "all", "--log-y", "-o", svg_path});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.empty());
  const std::string svg = slurp(svg_path);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find(">steps</text>") != std::string::npos);
  CHECK(svg.find("epsilon at delta = 1e-05") != std::string::npos);
  CHECK(svg.find(">rdp (upper bound)</text>") != std::string::npos);
  CHECK(svg.find(">gdp (approximation, not an upper bound)</text>") != std::string::npos);
  CHECK(svg.find("q = 0.01, sigma = 1, delta = 1e-05, steps 1 to 2000") != std::string::npos);
  CHECK(svg.find("href") == std::string::npos);  // self-contained

  REQUIRE_MESSAGE(run_shell("xmllint --noout " + svg_path).status == 0, "not well-formed XML");
  REQUIRE_MESSAGE(run_shell("rsvg-convert -f png -o " + png_path + " " + svg_path).status == 0,
                  "rsvg-convert failed (apt-get install librsvg2-bin)");
  const Image img = decode_png(slurp(png_path));
  CHECK(img.width == 800);
  CHECK(img.height == 500);
  std::size_t dark = 0, blue = 0;
  for (std::size_t i = 0; i + 2 < img.rgba.size(); i += img.channels) {
    const int red = img.rgba[i], green = img.rgba[i + 1], b = img.rgba[i + 2];
    if (red + green + b < 3 * 128) ++dark;
    if (b > 150 && red < 80) ++blue;  // the first series, #1f77b4
  }
  CHECK(dark > 2000);  // axes, ticks, labels
  CHECK(blue > 300);   // a curve, not just a frame
  std::remove(svg_path.c_str());
  std::remove(png_path.c_str());
}

TEST_CASE("plot: --epochs as the x axis, log axes, and SVG to stdout") {
  const auto r = run_dpbudget({"plot", "--dataset-size", "60000", "--batch-size", "256", "--epochs",
                               "1:30", "--sigma", "1.1", "--delta", "1e-5", "--points", "10",
                               "--log-x", "--log-y", "-o", "-"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.rfind("<?xml", 0) == 0);
  CHECK(r.out.find(">epochs</text>") != std::string::npos);
  CHECK(r.out.find("batch 256 of 60000") != std::string::npos);
}

TEST_CASE("plot: bad ranges and missing output are usage errors") {
  auto status = [](std::initializer_list<std::string> extra) {
    std::vector<std::string> args = {"plot", "-q", "0.01", "--sigma", "1", "--delta", "1e-5"};
    args.insert(args.end(), extra);
    const auto r = dpb::test::run_dpbudget_args(args);
    CHECK(r.out.empty());
    return r.status;
  };
  CHECK(status({"--steps", "100", "-o", "-"}) == 2);     // not a range
  CHECK(status({"--steps", "100:10", "-o", "-"}) == 2);  // a >= b
  CHECK(status({"--steps", "1:100"}) == 2);              // no -o
  CHECK(status({"--steps", "1:100", "--points", "1", "-o", "-"}) == 2);
}

TEST_CASE("tradeoff -o draws the f-DP curve as a well-formed SVG") {
  const std::string svg_path = "/tmp/dpbudget_tradeoff_test_" + std::to_string(::getpid()) + ".svg";
  const auto r = run_dpbudget({"tradeoff", "--mu", "1", "--points", "51", "-o", svg_path});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.empty());
  const std::string svg = slurp(svg_path);
  CHECK(svg.find(">mu = 1 GDP</text>") != std::string::npos);
  CHECK(svg.find(">type I error</text>") != std::string::npos);
  CHECK(run_shell("xmllint --noout " + svg_path).status == 0);
  std::remove(svg_path.c_str());
  // -o - writes the SVG to stdout instead of the table.
  const auto s = run_dpbudget({"tradeoff", "--epsilon", "1", "--delta", "0.01", "-o", "-"});
  REQUIRE(s.status == 0);
  CHECK(s.out.rfind("<?xml", 0) == 0);
  CHECK(s.out.find("<svg") != std::string::npos);
  CHECK(run_dpbudget({"tradeoff", "--mu", "1", "-o", "/nonexistent/dir/x.svg"}).status == 2);
}
