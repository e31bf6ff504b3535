/**
 * Kingsbury's DTCWT filter banks, with the values python dtcwt 0.12 ships in dtcwt/data/*.npz.
 *
 * The .npz files are binary, so the numbers are taken from public text copies of the same tables
 * and then checked against python's own transform output (fixtures/dtcwt, 1e-14 agreement):
 * - near_sym_a is rational: h0o = [-1 5 12 5 -1]/20, g0o = [-3 -15 73 170 73 -15 -3]/280.
 * - near_sym_b: ltfat/ltfat wavelets/wfilt_oddevenb.m (16 significant digits).
 * - qshift_a: ltfat/ltfat wavelets/wfilt_qshifta.m case 2 (there noted as taken from python
 *   DTCWT), written here with the 17-digit repr of the same numbers.
 * - qshift_b: csrf/cldtcwt src/DTCWT/dtcwt.cc h0bCoefs (= h0b, 17 digits), reversed to h0a;
 *   agrees with wfilt_qshifta.m case 3.
 * The rounding is ~1e-16 relative per tap, far below the 1e-9 the fixtures are checked to.
 *
 * Level 1 uses a biorthogonal odd-length pair (h0o/h1o analysis, g0o/g1o synthesis); levels >= 2
 * use q-shift even-length filters where tree b is tree a time-reversed, which gives the quarter
 * sample delay difference between the trees that makes the transform (nearly) shift invariant.
 */

/** Level-1 (odd, near-symmetric) filters, in the tuple order of dtcwt.coeffs.biort. */
export interface BiortFilters {
  readonly h0o: Float64Array;
  readonly g0o: Float64Array;
  readonly h1o: Float64Array;
  readonly g1o: Float64Array;
}

/** Level >= 2 (even, quarter-shift) filters, in the tuple order of dtcwt.coeffs.qshift. */
export interface QshiftFilters {
  readonly h0a: Float64Array;
  readonly h0b: Float64Array;
  readonly g0a: Float64Array;
  readonly g0b: Float64Array;
  readonly h1a: Float64Array;
  readonly h1b: Float64Array;
  readonly g1a: Float64Array;
  readonly g1b: Float64Array;
}

export interface DtcwtFilters {
  readonly biort: BiortFilters;
  readonly qshift: QshiftFilters;
}

export type BiortName = 'near_sym_a' | 'near_sym_b';
export type QshiftName = 'qshift_a' | 'qshift_b';

const f64 = (values: readonly number[]) => Float64Array.from(values);

/** A symmetric filter written as its first half plus centre tap, mirrored out to full length. */
function mirrored(half: readonly number[]): number[] {
  return [...half, ...half.slice(0, -1).reverse()];
}

/** Negates the taps whose index has the given parity (0: even, 1: odd), as the QMF relations do. */
function alternate(values: readonly number[], parity: 0 | 1): number[] {
  return values.map((v, i) => (i % 2 === parity ? -v : v));
}

/**
 * Builds a biorthogonal bank from its two lowpass filters. The highpasses follow the QMF rule
 * h1o[n] = (-1)^(n+1) g0o[n] and g1o[n] = (-1)^(n+1) h0o[n] counted from the first tap, which
 * for both near_sym banks gives a positive centre tap, as in the shipped tables.
 */
function biortBank(h0o: readonly number[], g0o: readonly number[]): BiortFilters {
  // Negate the taps whose index parity differs from the centre tap's, so the centre stays positive.
  const offCentre = (len: number) => (((len - 1) / 2 + 1) % 2) as 0 | 1;
  return {
    h0o: f64(h0o),
    g0o: f64(g0o),
    h1o: f64(alternate(g0o, offCentre(g0o.length))),
    g1o: f64(alternate(h0o, offCentre(h0o.length))),
  };
}

/**
 * Builds a q-shift bank from its tree-a analysis lowpass h0a, with the relations the shipped
 * qshift_*.npz tables satisfy: h0b = reverse(h0a), g0a = h0b, g0b = h0a, h1a = h0b with odd taps
 * negated, h1b = h0a with even taps negated (= reverse(h1a)), g1a = h1b, g1b = h1a.
 */
function qshiftBank(h0a: readonly number[]): QshiftFilters {
  const h0b = [...h0a].reverse();
  const h1a = alternate(h0b, 1);
  const h1b = alternate(h0a, 0);
  return {
    h0a: f64(h0a),
    h0b: f64(h0b),
    g0a: f64(h0b),
    g0b: f64(h0a),
    h1a: f64(h1a),
    h1b: f64(h1b),
    g1a: f64(h1b),
    g1b: f64(h1a),
  };
}

// near_sym_a: 5,7-tap near-symmetric biorthogonal pair.
const NEAR_SYM_A = biortBank(
  [-1, 5, 12, 5, -1].map((v) => v / 20),
  [-3, -15, 73, 170, 73, -15, -3].map((v) => v / 280),
);

// near_sym_b: 13,19-tap near-symmetric biorthogonal pair (half + centre, mirrored).
const NEAR_SYM_B = biortBank(
  mirrored([-0.0017578125, 0, 0.022265625, -0.046875, -0.0482421875, 0.296875, 0.55546875]),
  mirrored([
    7.062639508928571e-5, 0, -1.341901506696429e-3, -1.883370535714286e-3, 7.156808035714285e-3, 2.385602678571428e-2,
    -5.564313616071428e-2, -5.168805803571428e-2, 2.997576032366072e-1, 5.594308035714286e-1,
  ]),
);

// qshift_a: 10,10-tap q-shift prototype h0a.
const QSHIFT_A = qshiftBank([
  0.051130405283831656, -0.013975370246888838, -0.10983605166597087, 0.26383956105893763, 0.76662846779303717,
  0.56365571012705151, 0.00087362269521709679, -0.1002312195074762, -0.0016896812725281543, -0.0061818818921164382,
]);

// qshift_b: 14,14-tap q-shift prototype h0a.
const QSHIFT_B = qshiftBank([
  0.00325314276365318, -0.00388321199915849, 0.03466034684485349, -0.03887280126882779, -0.11720388769911527,
  0.27529538466888204, 0.75614564389252248, 0.56881042071212273, 0.011866092033797, -0.1067118046866654,
  0.0238253847949203, 0.01702522388155399, -0.00543947593727412, -0.00455689562847549,
]);

const BIORT: Record<BiortName, BiortFilters> = { near_sym_a: NEAR_SYM_A, near_sym_b: NEAR_SYM_B };
const QSHIFT: Record<QshiftName, QshiftFilters> = { qshift_a: QSHIFT_A, qshift_b: QSHIFT_B };

export function biort(name: BiortName): BiortFilters {
  return BIORT[name];
}

export function qshift(name: QshiftName): QshiftFilters {
  return QSHIFT[name];
}

/** The filter pair a transform runs with; python dtcwt's defaults are near_sym_a and qshift_a. */
export function dtcwtFilters(biortName: BiortName = 'near_sym_a', qshiftName: QshiftName = 'qshift_a'): DtcwtFilters {
  return { biort: biort(biortName), qshift: qshift(qshiftName) };
}
