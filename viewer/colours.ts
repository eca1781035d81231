/**
 * The viewer's colours, in one place: one per solver slot, and the contact points' (drawn over the
 * bodies, so they must be told from every slot's colour at a glance).
 *
 * Slots: the Okabe–Ito colours (Okabe & Ito 2008, "Color Universal Design"), told apart by readers with
 * the common colour-vision deficiencies, ordered for a dark background (their black left out, their sky
 * blue first: the main solver's), then a light grey. The compare report uses the same set on white
 * (src/bench/report-html.ts palette).
 *
 * Contacts: a light violet (hue 270°), a hue no slot is near: the nearest, reddish purple #CC79A7 (327°)
 * and the blues (202°), are 57° and 68° away. Before, a red (347°) 19° from the second slot's (#ff6b5a,
 * 6°), so pgs-cpu's overlay and the contact points could not be told apart.
 */
export const palette = ['#56B4E9', '#E69F00', '#009E73', '#CC79A7', '#F0E442', '#D55E00', '#0072B2', '#DDDDDD'];

/** contact points and normals: linear rgb, unlit, drawn over everything (the viewer test checks its hue) */
export const CONTACT_COLOUR = [0.7, 0.4, 1.0] as const;
