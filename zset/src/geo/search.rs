//! What a radius or box search computes before and while it reads the sorted set, as
//! Redis's geohash_helper.c does: the shape's bounding box, the cell size whose 3x3 block
//! covers it, the cells of that block worth reading, and the distance and membership test
//! of each candidate point.

use super::hash::{self, Hash, Neighbors, LAT_RANGE, LONG_RANGE};

/// The earth's quadratic mean radius Redis computes distances with, in meters.
pub const EARTH_RADIUS_M: f64 = 6372797.560856;
/// Half the Web Mercator circumference, the widest radius the step estimate starts from.
const MERCATOR_MAX: f64 = 20037726.37;

/// The area a search covers, in meters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extent {
    /// BYRADIUS: every point within this distance of the centre.
    Radius(f64),
    /// BYBOX: a box this wide (east-west) and high (north-south), centred.
    Box {
        /// East-west extent.
        width: f64,
        /// North-south extent.
        height: f64,
    },
}

/// A search: its centre `[longitude, latitude]` and its extent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// The centre, `[longitude, latitude]`.
    pub center: [f64; 2],
    /// The area around it.
    pub extent: Extent,
}

/// The cells to read: the centre cell then north, south, east, west, north-east,
/// north-west, south-east, south-west, a left-out one as [`Hash::is_zero`]
/// (GeoHashRadius in the order membersOfAllNeighbors reads it).
pub type Cells = [Hash; 9];

fn deg_rad(d: f64) -> f64 {
    d * (std::f64::consts::PI / 180.0)
}

fn rad_deg(r: f64) -> f64 {
    r / (std::f64::consts::PI / 180.0)
}

/// The bits per coordinate whose cells are about the size of a `range_m` search at
/// latitude `lat` (geohashEstimateStepsByRadius).
pub fn estimate_step(range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return 26;
    }
    let mut range = range_m;
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    // Cells narrow towards the poles.
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

impl Shape {
    /// Half the north-south and east-west extents, in meters.
    fn half_sides(&self) -> (f64, f64) {
        match self.extent {
            Extent::Radius(r) => (r, r),
            Extent::Box { width, height } => (height / 2.0, width / 2.0),
        }
    }

    /// `[min lon, min lat, max lon, max lat]` of the area (geohashBoundingBox): the
    /// longitude span taken at the edge nearer the pole, where it is widest in degrees.
    pub fn bounding_box(&self) -> [f64; 4] {
        let [lon, lat] = self.center;
        let (height, width) = self.half_sides();
        let lat_delta = rad_deg(height / EARTH_RADIUS_M);
        let long_delta_top = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat + lat_delta).cos());
        let long_delta_bottom = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat - lat_delta).cos());
        let long_delta = if lat < 0.0 {
            long_delta_bottom
        } else {
            long_delta_top
        };
        [
            lon - long_delta,
            lat - lat_delta,
            lon + long_delta,
            lat + lat_delta,
        ]
    }

    /// The cells a search must read (geohashCalculateAreasByShapeWGS84).
    ///
    /// The centre's cell at the estimated step and its eight neighbours cover the area,
    /// unless a neighbour ends inside the bounding box: then one step coarser. Neighbours
    /// on a side the centre cell already reaches past the box are left out.
    pub fn cells(&self) -> Cells {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounding_box();
        let [lon, lat] = self.center;
        let radius = match self.extent {
            Extent::Radius(r) => r,
            Extent::Box { width, height } => {
                ((width / 2.0).powi(2) + (height / 2.0).powi(2)).sqrt()
            }
        };
        let mut step = estimate_step(radius, lat);
        let at = |step| {
            let h = hash::encode_wgs84(lon, lat, step).unwrap_or_default();
            (h, hash::neighbors(h), hash::decode(h))
        };
        let (mut h, mut n, mut area) = at(step);
        let too_fine = hash::decode(n.north).latitude.max < max_lat
            || hash::decode(n.south).latitude.min > min_lat
            || hash::decode(n.east).longitude.max < max_lon
            || hash::decode(n.west).longitude.min > min_lon;
        if step > 1 && too_fine {
            step -= 1;
            (h, n, area) = at(step);
        }
        if step >= 2 {
            let zero = Hash::default();
            let Neighbors {
                north,
                east,
                west,
                south,
                north_east,
                south_east,
                north_west,
                south_west,
            } = &mut n;
            if area.latitude.min < min_lat {
                (*south, *south_west, *south_east) = (zero, zero, zero);
            }
            if area.latitude.max > max_lat {
                (*north, *north_east, *north_west) = (zero, zero, zero);
            }
            if area.longitude.min < min_lon {
                (*west, *south_west, *north_west) = (zero, zero, zero);
            }
            if area.longitude.max > max_lon {
                (*east, *south_east, *north_east) = (zero, zero, zero);
            }
        }
        [
            h,
            n.north,
            n.south,
            n.east,
            n.west,
            n.north_east,
            n.north_west,
            n.south_east,
            n.south_west,
        ]
    }

    /// The membership test of the area, prepared once for a search's candidates.
    pub fn matcher(&self) -> Matcher {
        let lat1r = deg_rad(self.center[1]);
        // The widest longitude offset of a point within the radius: that of the meridian
        // tangent to the circle, asin(sin(r / R) / cos(lat)); none when the circle holds a
        // pole.
        let max_lon_offset = match self.extent {
            Extent::Radius(r) => {
                let angle = r / EARTH_RADIUS_M;
                (angle < std::f64::consts::FRAC_PI_2 - lat1r.abs())
                    .then(|| (angle.sin() / lat1r.cos()).min(1.0).asin())
            }
            Extent::Box { .. } => None,
        };
        Matcher {
            shape: *self,
            lat1r,
            cos_lat1: lat1r.cos(),
            max_lon_offset,
        }
    }
}

/// Tests candidate points against one [`Shape`] (Redis's geoWithinShape), answering the
/// distances Redis computes, bit for bit, with less work per rejected point.
#[derive(Clone, Copy, Debug)]
pub struct Matcher {
    shape: Shape,
    /// The centre's latitude in radians and its cosine, the same values every
    /// [`distance`] from the centre computes.
    lat1r: f64,
    cos_lat1: f64,
    /// For a radius, the widest longitude offset (radians) a point inside can have.
    max_lon_offset: Option<f64>,
}

/// Relative slack of the pre-tests, far above the rounding of either side, so a pre-test
/// never drops a point Redis would keep.
const PRETEST_SLACK: f64 = 1.0 + 1e-9;
/// Absolute slack of the longitude pre-test, in radians (for a zero radius).
const PRETEST_SLACK_RAD: f64 = 1e-12;

impl Matcher {
    /// The distance in meters from the centre to `point` when the point is inside the
    /// area: within the radius, or within half the box's height north or south and half
    /// its width east or west along the point's parallel.
    pub fn distance_if_within(&self, point: [f64; 2]) -> Option<f64> {
        let [x1, y1] = self.shape.center;
        let [x2, y2] = point;
        match self.shape.extent {
            Extent::Radius(r) => {
                // A great circle is never shorter than its north-south part, and no point
                // inside lies east or west of the tangent meridians: most points of the
                // cells read are refused here, before any trigonometry.
                if lat_distance(y1, y2) > r * PRETEST_SLACK {
                    return None;
                }
                if let Some(max) = self.max_lon_offset {
                    let mut offset = (deg_rad(x2) - deg_rad(x1)).abs();
                    if offset > std::f64::consts::PI {
                        offset = 2.0 * std::f64::consts::PI - offset;
                    }
                    if offset > max * PRETEST_SLACK + PRETEST_SLACK_RAD {
                        return None;
                    }
                }
                Some(self.distance_from_center(x2, y2)).filter(|&d| d <= r)
            }
            Extent::Box { width, height } => {
                if lat_distance(y2, y1) > height / 2.0 || distance(x2, y2, x1, y2) > width / 2.0 {
                    return None;
                }
                Some(self.distance_from_center(x2, y2))
            }
        }
    }

    /// [`distance`] from the centre, its terms of the centre computed once.
    fn distance_from_center(&self, lon2: f64, lat2: f64) -> f64 {
        let lon1 = self.shape.center[0];
        let v = ((deg_rad(lon2) - deg_rad(lon1)) / 2.0).sin();
        if v == 0.0 {
            return lat_distance(self.shape.center[1], lat2);
        }
        let lat2r = deg_rad(lat2);
        let u = ((lat2r - self.lat1r) / 2.0).sin();
        let a = u * u + self.cos_lat1 * lat2r.cos() * v * v;
        2.0 * EARTH_RADIUS_M * a.sqrt().asin()
    }
}

/// The north-south distance between two latitudes, in meters (geohashGetLatDistance).
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The haversine great-circle distance in meters (geohashGetDistance), the latitude
/// distance alone when the longitudes are the same.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((deg_rad(lon2) - deg_rad(lon1)) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Whether `lon, lat` lies within Redis's indexable limits.
pub fn valid_point(lon: f64, lat: f64) -> bool {
    (LONG_RANGE.min..=LONG_RANGE.max).contains(&lon)
        && (LAT_RANGE.min..=LAT_RANGE.max).contains(&lat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_matches_redis() {
        // GEODIST Palermo Catania in Redis: "166274.1516" m.
        let [x1, y1] = hash::decode_score(3479099956230698.0);
        let [x2, y2] = hash::decode_score(3479447370796909.0);
        assert_eq!(format!("{:.4}", distance(x1, y1, x2, y2)), "166274.1516");
    }

    #[test]
    fn the_matcher_answers_the_plain_distance() {
        let center = [13.4, 38.1];
        let m = Shape {
            center,
            extent: Extent::Radius(50_000.0),
        }
        .matcher();
        for i in 0..200 {
            let p = [
                13.0 + f64::from(i) * 0.004,
                37.8 + f64::from(i % 37) * 0.017,
            ];
            let d = distance(center[0], center[1], p[0], p[1]);
            let expected = (d <= 50_000.0).then_some(d);
            assert_eq!(
                m.distance_if_within(p).map(f64::to_bits),
                expected.map(f64::to_bits)
            );
        }
    }

    #[test]
    fn step_estimates_follow_the_radius_and_the_latitude() {
        assert_eq!(estimate_step(0.0, 0.0), 26);
        assert_eq!(estimate_step(200_000.0, 38.0), 6);
        assert_eq!(estimate_step(200_000.0, 70.0), 5);
        assert_eq!(estimate_step(200_000.0, -85.0), 4);
        assert_eq!(estimate_step(1e9, 0.0), 1);
    }

    #[test]
    fn a_search_reads_the_cells_around_it() {
        let shape = Shape {
            center: [15.0, 37.0],
            extent: Extent::Radius(200_000.0),
        };
        let cells = shape.cells();
        assert!(!cells[0].is_zero());
        let palermo = hash::decode_score(3479099956230698.0);
        assert!(shape.matcher().distance_if_within(palermo).is_some());
        let (lo, hi) = cells
            .iter()
            .filter(|c| !c.is_zero())
            .map(Hash::score_range)
            .find(|&(lo, hi)| (lo..hi).contains(&3479099956230698.0))
            .expect("some cell holds Palermo");
        assert!(lo < hi);
        let boxed = Shape {
            center: [15.0, 37.0],
            extent: Extent::Box {
                width: 400_000.0,
                height: 400_000.0,
            },
        };
        assert!(boxed.matcher().distance_if_within(palermo).is_some());
        assert!(boxed.matcher().distance_if_within([15.0, 39.0]).is_none());
    }
}
