//! LOLWUT version 5: Georg Nees's "Schotter" (1968), squares shaken more and more as rows go
//! down, drawn in Braille characters (2 x 4 pixels each), as Redis's lolwut5.c.

use super::{Canvas, Rand, RAND_MAX};

/// The canvas of Schotter for a terminal of `console_cols` columns, with
/// `squares_per_row` x `squares_per_col` squares (lwDrawSchotter, with C's float steps).
pub fn draw(
    console_cols: i32,
    squares_per_row: i32,
    squares_per_col: i32,
    rng: &mut Rand,
) -> Canvas {
    let canvas_width = console_cols * 2;
    let padding = if canvas_width > 4 { 2 } else { 0 };
    let square_side = (canvas_width - padding * 2) as f32 / squares_per_row as f32;
    let canvas_height = (square_side * squares_per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(canvas_width, canvas_height, 0);
    for y in 0..squares_per_col {
        for x in 0..squares_per_row {
            let mut sx = (x as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            let mut angle = 0f32;
            if y > 1 {
                let mut shake =
                    || rng.rand() as f32 / RAND_MAX as f32 / squares_per_col as f32 * y as f32;
                let (mut r1, mut r2, mut r3) = (shake(), shake(), shake());
                if rng.rand() % 2 != 0 {
                    r1 = -r1;
                }
                if rng.rand() % 2 != 0 {
                    r2 = -r2;
                }
                if rng.rand() % 2 != 0 {
                    r3 = -r3;
                }
                angle = r1;
                sx = (sx as f32 + r2 * square_side / 3.0) as i32;
                sy = (sy as f32 + r3 * square_side / 3.0) as i32;
            }
            canvas.draw_square(sx, sy, square_side, angle, 1);
        }
    }
    canvas
}

/// The canvas as Braille characters, a row of them per four pixel rows (renderCanvas).
pub fn render(canvas: &Canvas) -> String {
    let mut text = String::new();
    let mut y = 0;
    while y < canvas.height {
        let mut x = 0;
        while x < canvas.width {
            let dots = [
                (x, y),
                (x, y + 1),
                (x, y + 2),
                (x + 1, y),
                (x + 1, y + 1),
                (x + 1, y + 2),
                (x, y + 3),
                (x + 1, y + 3),
            ];
            let byte = dots
                .iter()
                .enumerate()
                .filter(|(_, &(px, py))| canvas.pixel(px, py) != 0)
                .fold(0u32, |b, (bit, _)| b | 1 << bit);
            text.push(char::from_u32(0x2800 + byte).expect("a Braille pattern"));
            x += 2;
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
        y += 4;
    }
    text
}

/// LOLWUT VERSION 5 [columns [squares-per-row [squares-per-col]]]: the art and its caption
/// (arguments clamped to 1..=1000, 1..=200, 1..=200; defaults 66, 8, 12).
pub fn lolwut5(cols: i64, per_row: i64, per_col: i64, version: &str, rng: &mut Rand) -> String {
    let canvas = draw(
        cols.clamp(1, 1000) as i32,
        per_row.clamp(1, 200) as i32,
        per_col.clamp(1, 200) as i32,
        rng,
    );
    let mut out = render(&canvas);
    out.push_str("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    out.push_str(version);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_pieces_as_redis_draws_them() {
        let mut rng = Rand::new(1);
        // LOLWUT VERSION 5 0 0 0 and VERSION 5 2 1 1 on Redis 7.0.
        assert_eq!(
            lolwut5(0, 0, 0, "7.2.4", &mut rng),
            "\u{280b}\n\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.2.4\n"
        );
        assert!(lolwut5(2, 1, 1, "7.2.4", &mut rng).starts_with("\u{284f}\u{2809}\n"));
    }

    #[test]
    fn the_first_two_rows_are_not_shaken() {
        let a = render(&draw(66, 8, 2, &mut Rand::new(1)));
        let b = render(&draw(66, 8, 2, &mut Rand::new(2)));
        assert_eq!(a, b);
        let a = render(&draw(66, 8, 12, &mut Rand::new(1)));
        let b = render(&draw(66, 8, 12, &mut Rand::new(2)));
        assert_ne!(a, b);
    }

    proptest! {
        #[test]
        fn rows_and_columns_follow_the_arguments(cols in 1i32..120, per_row in 1i32..20,
                                                 per_col in 1i32..20, seed: u32) {
            let canvas = draw(cols, per_row, per_col, &mut Rand::new(seed));
            let text = render(&canvas);
            let lines: Vec<&str> = text.split('\n').collect();
            prop_assert_eq!(canvas.width, cols * 2);
            for line in &lines[..lines.len() - 1] {
                prop_assert_eq!(line.chars().count() as i32, cols);
            }
            prop_assert!(lines.len() as i32 >= (canvas.height + 3) / 4);
        }
    }
}
