/**
 * gs-cpu on a scene with contacts: coloured block Gauss-Seidel on the joints' rows, then the contacts
 * one after the other on the contact solver (contacts/contact-solver.ts), as the sequential stage list
 * (solvers/sequential-cpu.ts) with pgs-cpu's rule: rigid rows, Baumgarte β with the slop, no relax; the
 * joints' β by pgs-cpu's split impulses (rows/block-solver.ts solvePositions: symmetric sweeps over the
 * joints' blocks, which are laid out colour by colour), as gs-gpu's WGSL twin (solve_colour_positions*:
 * its colours in order, every other sweep reversed).
 *
 * Invariant: the joints' rows are laid out colour by colour (model/colouring.ts, as gs/cpu.ts and
 * gs-gpu), and a sweep walks them in that order (every other sweep backwards: symmetric Gauss-Seidel);
 * constraints of one colour share no dynamic body, so the sequential sweep over a colour is the
 * colour's parallel update of gs-gpu. On the contacts gs-cpu and pgs-cpu are the same algorithm (the
 * sequential sweep over the contact records; the GPU contact issue colours them).
 *
 * Its defaults on a contact scene are 4 substeps (SolverInfo.contactDefaults; its 8 sweeps stay): at
 * gs-gpu's one step a 10-box stack awake creeps 88 mm over 9 s and a yawed one 847 mm (a sweep of 8
 * does not carry a column of ten), at 4 × 8 it holds (test/piles.test.ts); on an unbraced column more, by
 * pgs-cpu's column rule (pgs/substeps.ts: fifteen 1 m boxes 6). Its joint scenes keep
 * gs-gpu's defaults (gs/cpu.ts, the GPU's reference).
 */
import type { WorldDesc } from '../../model/world.js';
import { colourOrderedWorld, type Colouring } from '../../model/colouring.js';
import { recolourJointRows } from './cpu.js';
import type { SolverOptions } from '../solver.js';
import { baumgarteContacts } from '../../rows/block-solver.js';
import { SequentialCpuSolver } from '../sequential-cpu.js';

export class GaussSeidelContactCpuSolver extends SequentialCpuSolver {
  readonly id: string = 'gs-cpu';
  colouring: Colouring;

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    const ordered = colourOrderedWorld(world);
    super(ordered.world, options, { relax: false, contactRule: (o) => baumgarteContacts(o.beta, o.restitutionThreshold), jointSpring: null, sweepParity: 'run', splitImpulse: true });
    this.colouring = ordered.colouring;
  }

  /** The joints changed: colour them again and lay the rows out colour by colour (as gs/cpu.ts). */
  protected override relayoutJoints(): void {
    this.colouring = recolourJointRows(this);
  }
}
