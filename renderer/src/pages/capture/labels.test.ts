import { describe, expect, it } from 'vitest';
import { CONDITION_CODES, MODEL_DISAGREEMENT_MAX_DEG, modelDisagreementCondition, type ModelCrossCheck } from '../../../../models/capture/quality';
import { COCO17 } from '../../../../models/capture/keypoints';
import { POSE_JOINTS } from '../../../../models/capture/metrics';
import { CONDITION, conditionLabel, JOINT_LABEL, jointInSentence } from './labels';

describe('condition labels', () => {
  it('every condition code a reading can carry has a short label', () => {
    for (const c of CONDITION_CODES) expect(CONDITION[c], c).toBeTruthy();
  });

  it("the cross-check conditions show the two models' difference beside the value, taken from the stored sentence", () => {
    const F = 10;
    const x: ModelCrossCheck = {
      primary: 'MoveNet Lightning',
      secondary: 'MoveNet Thunder',
      primarySet: COCO17,
      primaryPoints: new Float64Array(F * COCO17.length * 3),
      secondarySet: COCO17,
      secondaryPoints: new Float64Array(F * COCO17.length * 3),
    };
    const reported = Float64Array.from({ length: F }, (_, f) => 30 + f);
    const shifted = (d: number) => Float64Array.from(reported, (v) => v + d);
    expect(conditionLabel(modelDisagreementCondition('knee_flexion', 'left', reported, shifted(MODEL_DISAGREEMENT_MAX_DEG + 5.2), x))).toBe(
      `two pose models differ by ${(MODEL_DISAGREEMENT_MAX_DEG + 5.2).toFixed(1)}°`,
    );
    expect(conditionLabel(modelDisagreementCondition('knee_flexion', 'left', reported, shifted(-5.8), x))).toBe('second pose model within 5.8°');
    expect(conditionLabel(modelDisagreementCondition('knee_flexion', 'left', reported, new Float64Array(F).fill(NaN), x))).toBe(
      'not cross-checked by a second model',
    );
    expect(conditionLabel({ code: 'two_view_keypoints', detail: 'whatever' })).toBe('joint seen by only two cameras');
  });
});

describe('joint names', () => {
  it('every measured joint has a name, and the angles that are not the ISB joint angle say so in it (issue 14 review)', () => {
    for (const j of POSE_JOINTS) expect(JOINT_LABEL[j], j).toBeTruthy();
    for (const j of ['hip_flexion', 'shoulder_flexion', 'hip_abduction']) expect(JOINT_LABEL[j], j).toMatch(/not ISB\)$/);
    expect(jointInSentence('hip_flexion')).toBe('hip flexion');
  });
});
