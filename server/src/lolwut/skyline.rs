//! LOLWUT version 6: a city skyline inspired by the parallax backgrounds of 8 bit games
//! (Plaguemon), in the terminal's four grays, as Redis's lolwut6.c draws it.

use super::{Canvas, Rand};

/// One skyscraper: where, how large, its color, and whether it has windows.
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

/// Draws a skyscraper from the bottom row up, its roof two pixels narrower on each side;
/// windows (two pixels wide, one tall) take one of the two grays at random
/// (generateSkyscraper).
fn skyscraper(canvas: &mut Canvas, si: &Skyscraper, rng: &mut Rand) {
    let starty = canvas.height - 1;
    let endy = starty - si.height + 1;
    let mut y = starty;
    while y >= endy {
        for x in si.xoff..si.xoff + si.width {
            if y == endy && (x <= si.xoff + 1 || x >= si.xoff + si.width - 2) {
                continue;
            }
            let mut color = si.color;
            if si.windows
                && x > si.xoff + 1
                && x < si.xoff + si.width - 2
                && y > endy + 1
                && y < starty - 1
            {
                let relx = x - (si.xoff + 1);
                let rely = y - (endy + 1);
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        color = 1 + (rng.rand() % 2) as u8;
                        if color != si.color {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        color = canvas.pixel(x - 1, y);
                    }
                }
            }
            canvas.draw_pixel(x, y, color);
        }
        y -= 1;
    }
}

/// The skyline: two rows of window-less buildings in the grays (the lighter behind), then
/// the black foreground ones with windows (generateSkyline).
pub fn draw(canvas: &mut Canvas, rng: &mut Rand) {
    let h = canvas.height;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rng.rand() % 8;
            let width = 10 + rng.rand() % 9;
            let height = if color == 2 {
                h / 2 + (rng.rand() % h) / 2
            } else {
                h / 2 + (rng.rand() % h) / 3
            };
            let si = Skyscraper {
                xoff: offset,
                width,
                height,
                windows: false,
                color,
            };
            skyscraper(canvas, &si, rng);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += rng.rand() % 8;
        let mut width = 5 + rng.rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (rng.rand() % h) / 2;
        let si = Skyscraper {
            xoff: offset,
            width,
            height,
            windows: true,
            color: 0,
        };
        skyscraper(canvas, &si, rng);
        offset += width + 5;
    }
}

/// The canvas as colored spaces, foreground and background set for each (renderCanvas).
pub fn render(canvas: &Canvas) -> String {
    let mut text = String::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let code = match canvas.pixel(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.push_str("\x1b[");
            text.push_str(code);
            text.push_str(" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text
}

/// LOLWUT VERSION 6 [columns [rows]]: the skyline and its caption (arguments clamped to
/// 1..=1000; defaults 80 and 20).
pub fn lolwut6(cols: i64, rows: i64, version: &str, rng: &mut Rand) -> String {
    let mut canvas = Canvas::new(cols.clamp(1, 1000) as i32, rows.clamp(1, 1000) as i32, 3);
    draw(&mut canvas, rng);
    let mut out = render(&canvas);
    out.push_str("\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. ");
    out.push_str(version);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_tiny_skyline_as_redis_prints_it() {
        // LOLWUT VERSION 6 1 1: one pixel, of some gray.
        let out = lolwut6(1, 1, "7.2.4", &mut Rand::new(7));
        let (art, caption) = out.split_once('\n').unwrap();
        assert!(
            art.starts_with("\x1b[0;") && art.ends_with("m \x1b[0m"),
            "{art:?}"
        );
        assert_eq!(
            caption,
            "Dedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. 7.2.4\n"
        );
    }

    proptest! {
        #[test]
        fn every_pixel_is_one_of_the_four_grays(cols in 1i64..90, rows in 1i64..30, seed: u32) {
            let out = lolwut6(cols, rows, "7.2.4", &mut Rand::new(seed));
            let lines: Vec<&str> = out.split('\n').collect();
            prop_assert_eq!(lines.len() as i64, rows + 3);
            for line in &lines[..rows as usize] {
                prop_assert_eq!(line.matches(" \x1b[0m").count() as i64, cols);
                let grays = line.matches("\x1b[0;30;40m").count() + line.matches("\x1b[0;90;100m").count()
                    + line.matches("\x1b[0;37;47m").count() + line.matches("\x1b[0;97;107m").count();
                prop_assert_eq!(grays as i64, cols);
            }
        }
    }
}
