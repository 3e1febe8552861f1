// Schema changes for compliance, in their own file: migrations.ts is long enough.
export const COMPLIANCE_MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 21,
    name: "compliance: alerts and holds on position actions",
    statements: [
      // A rule or a screener holds a queued repayment, withdrawal, close, liquidation or top-up as it
      // holds a mint: the relay sends none until it is released, and a rejected one fails unsent.
      `ALTER TABLE compliance_alerts DROP CONSTRAINT compliance_alerts_subject_type_check`,
      `ALTER TABLE compliance_alerts ADD CONSTRAINT compliance_alerts_subject_type_check CHECK (subject_type IN
        ('mint', 'redemption', 'deposit', 'address', 'payout', 'position_action'))`,
      `ALTER TABLE compliance_holds DROP CONSTRAINT compliance_holds_subject_type_check`,
      `ALTER TABLE compliance_holds ADD CONSTRAINT compliance_holds_subject_type_check CHECK (subject_type IN
        ('mint', 'redemption', 'payout', 'position_action'))`,
      // The velocity rule counts a signer's recent actions.
      `CREATE INDEX position_actions_signer_recent ON position_actions (lower(signer), created_at)`,
    ],
  },
];
