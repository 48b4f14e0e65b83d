// ReactorApps module
